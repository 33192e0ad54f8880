/**
 * An input id is an idempotency key chosen by producers (often derived from a job id or a URL-ish
 * name), so it allows a few separators beyond the session-id alphabet: `@` and `/`.
 */
export const INPUT_ID_PATTERN = /^[A-Za-z0-9_.:@/-]{1,200}$/;

/** Longest job id an input records as its origin (a raw job's longer id is recorded by its hash). */
export const MAX_ORIGIN_JOB_ID_LENGTH = 512;
