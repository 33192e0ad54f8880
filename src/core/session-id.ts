import { SessionInvalidIdError } from './errors/index.js';

/**
 * A session id becomes part of Redis keys and log lines, so it is restricted to a safe alphabet:
 * 1–128 characters of `[A-Za-z0-9_.:-]` (DESIGN.md §5).
 */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

export function isValidSessionId(value: unknown): value is string {
  return typeof value === 'string' && SESSION_ID_PATTERN.test(value);
}

/** Returns the id unchanged, or throws `session.invalid_id` saying what was wrong. */
export function assertSessionId(value: unknown): string {
  if (isValidSessionId(value)) return value;
  throw new SessionInvalidIdError(describeInvalid(value), { details: { received: preview(value) } });
}

function describeInvalid(value: unknown): string {
  if (typeof value !== 'string') return `session id must be a string, got ${value === null ? 'null' : typeof value}`;
  if (value.length === 0) return 'session id must not be empty';
  if (value.length > 128) return `session id must be at most 128 characters, got ${value.length}`;
  return 'session id may contain only letters, digits, "_", ".", ":" and "-"';
}

function preview(value: unknown): string {
  // String() throws for an object without a primitive form (Object.create(null)): describe it instead.
  const text = typeof value === 'string' ? value : value !== null && typeof value === 'object' ? Object.prototype.toString.call(value) : String(value);
  return text.length > 64 ? `${text.slice(0, 64)}…` : text;
}
