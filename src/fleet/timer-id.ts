import { InputInvalidError } from '../core/errors/index.js';

/**
 * A timer id: 1–100 of `[A-Za-z0-9_.:@/-]` (the input-id alphabet; short enough that the input id of
 * its firings, `timer:<id>:<n>`, fits the 200 characters an input id may have).
 */
export const TIMER_ID_PATTERN = /^[A-Za-z0-9_.:@/-]{1,100}$/;

/** What {@link TIMER_ID_PATTERN} allows, for messages. */
export const TIMER_ID_RULE = '1 to 100 of A-Z a-z 0-9 _ . : @ / -';

/** Returns the id unchanged, or throws `input.invalid` saying what a timer id must be. */
export function assertTimerId(value: unknown): string {
  if (typeof value === 'string' && TIMER_ID_PATTERN.test(value)) return value;
  throw new InputInvalidError(`timerId must be ${TIMER_ID_RULE}`);
}
