import { toJsonText } from '../core/json-text.js';

/** The longest delay or period of a timer, and how far from now its `at` may be: 366 days. */
export const MAX_TIMER_DELAY_DAYS = 366;
/** {@link MAX_TIMER_DELAY_DAYS} in milliseconds. */
export const MAX_TIMER_DELAY_MS = MAX_TIMER_DELAY_DAYS * 24 * 3600 * 1000;

/** The shortest period of a recurring timer: one second. */
export const MIN_TIMER_EVERY_MS = 1000;

/** The longest timer note (as the `timer` input's payload allows). */
export const MAX_TIMER_NOTE_LENGTH = 10_000;

/**
 * What is wrong with `note` as a timer note, naming it `what`, or null: it must be a non-blank string
 * of at most {@link MAX_TIMER_NOTE_LENGTH} characters that Postgres can store (a NUL fails the write;
 * an unpaired surrogate would be stored as U+FFFD) and that the firing's payload is accepted with.
 */
export function timerNoteProblem(note: unknown, what: string): string | null {
  if (typeof note !== 'string' || note.trim() === '' || note.length > MAX_TIMER_NOTE_LENGTH) {
    return `${what} must be a non-blank string of at most ${MAX_TIMER_NOTE_LENGTH} characters`;
  }
  try {
    toJsonText(note, what);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * Whether `at` is a time a timer may be set for: at most {@link MAX_TIMER_DELAY_MS} from now either
 * way (a past time fires at once). False for an invalid Date.
 */
export function withinTimerRange(at: Date, now: number = Date.now()): boolean {
  return Math.abs(at.getTime() - now) <= MAX_TIMER_DELAY_MS;
}
