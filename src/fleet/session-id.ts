import { SessionInvalidIdError } from '../core/errors/index.js';

/**
 * A session id becomes part of Redis keys and log lines, so it is restricted to a safe alphabet:
 * 1–128 characters of `[A-Za-z0-9_.:-]`. A new one must also not end in one of
 * {@link RESERVED_SESSION_ID_SUFFIXES} ({@link assertNewSessionId}).
 */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * Suffixes of the keys a session has in Redis next to its stream `<queue>:events:<id>` (its seq
 * counter and finished set: `src/fleet/fleet-keys.ts`). The stream of a session whose id ends in
 * one of them (`a:seq`) would be another session's key (`a`'s counter), so no new session may take
 * such an id. One stored before this rule is still run, read and deleted: it only takes no inputs.
 */
export const RESERVED_SESSION_ID_SUFFIXES = [':seq', ':finished'] as const;

export function isValidSessionId(value: unknown): value is string {
  return typeof value === 'string' && SESSION_ID_PATTERN.test(value);
}

/** Returns the id unchanged, or throws `session.invalid_id` saying what was wrong. */
export function assertSessionId(value: unknown): string {
  if (isValidSessionId(value)) return value;
  throw new SessionInvalidIdError(describeInvalid(value), { details: { received: preview(value) } });
}

/**
 * {@link assertSessionId} for an id that may create a session (`sessions.create`, an input's accept):
 * also refuses one ending in a {@link RESERVED_SESSION_ID_SUFFIXES} suffix, `session.invalid_id`.
 */
export function assertNewSessionId(value: unknown): string {
  const id = assertSessionId(value);
  const suffix = RESERVED_SESSION_ID_SUFFIXES.find((reserved) => id.endsWith(reserved));
  if (suffix === undefined) return id;
  throw new SessionInvalidIdError(
    `session id must not end in ${RESERVED_SESSION_ID_SUFFIXES.map((reserved) => `"${reserved}"`).join(' or ')}: the stream of such a session would be the "${suffix}" key of session "${id.slice(0, -suffix.length)}"`,
    { details: { received: preview(id) } },
  );
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
