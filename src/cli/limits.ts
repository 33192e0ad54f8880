/**
 * The numbers the help states, kept here so that printing the help loads no command module (the
 * command modules import these; a unit test checks the copies of library limits still match).
 */

/** Messages `history` reads from Postgres at a time. */
export const HISTORY_PAGE = 1000;
/** Accepted `history --limit` values. */
export const HISTORY_LIMIT = { min: 1, max: 1_000_000 } as const;
/** Accepted `tail --limit` values. */
export const TAIL_LIMIT = { min: 1, max: 1_000_000 } as const;
/** Node's longest timer, in ms (2^31-1): `MAX_TIMER_MS` of the core. */
export const MAX_TIMER_MS = 2_147_483_647;
/** Accepted `worker --grace` values, in ms. */
export const WORKER_GRACE_MS = { min: 0, max: MAX_TIMER_MS, unit: 'ms' } as const;
/** After a second signal, how long the worker's forced close may take before the process exits 1, in ms. */
export const FORCED_EXIT_MS = 12_000;
/** Longest `abort-pending --reason` (`MAX_ABORT_REASON_LENGTH` of the input payload). */
export const MAX_ABORT_REASON_LENGTH = 500;
/** Longest interaction id (`MAX_INTERACTION_ID_LENGTH` of the input payload). */
export const MAX_INTERACTION_ID_LENGTH = 200;
/** Furthest a timer may be due, in days (`MAX_TIMER_DELAY_DAYS` of the fleet). */
export const MAX_TIMER_DELAY_DAYS = 366;
/** Accepted `timer --in` values, in ms. */
export const TIMER_IN = { min: 0, max: MAX_TIMER_DELAY_DAYS * 86_400_000, unit: 'ms' } as const;
/** Accepted `timer --every` values, in ms (`MIN_TIMER_EVERY_MS` of the fleet is the least). */
export const TIMER_EVERY = { min: 1000, max: MAX_TIMER_DELAY_DAYS * 86_400_000, unit: 'ms' } as const;
/** Sessions `sessions` lists a page at most (`SessionAdmin.list`). */
export const SESSIONS_LIMIT = { min: 1, max: 200 } as const;
/** Longest `result --wait`, in ms (one day). */
export const RESULT_WAIT_MS = { min: 1, max: 86_400_000 } as const;
/** `result --wait` with no duration waits this long. */
export const RESULT_WAIT_DEFAULT_MS = 300_000;
/** A quiet `tail` says it is waiting after this long, in ms. */
export const TAIL_QUIET_HINT_MS = 3000;
