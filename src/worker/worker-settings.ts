import type { ResolvedConfig } from '../config/index.js';
import type { DrainSettings } from './worker-context.js';

/** Drain settings from the configuration (see `DrainSettings`), `overrides` on top (tests, embedders). */
/** Longest a `timer.fire` hook may take by default, ms. */
export const TIMER_HOOK_TIMEOUT_MS = 30_000;

export function drainSettings(config: ResolvedConfig, overrides: Partial<DrainSettings> = {}): DrainSettings {
  return {
    leaseTtlMs: config.worker.leaseTtlMs,
    ...config.worker.drain,
    maxInputBytes: config.worker.maxInputBytes,
    timerHookTimeoutMs: TIMER_HOOK_TIMEOUT_MS,
    ...overrides,
  };
}

/**
 * BullMQ worker options: a generous lock (LLM turns are long), stalled jobs redelivered (fenced, so
 * safe), and a bounded retention for jobs that set none — the raw path's `send` and `resume` jobs,
 * which BullMQ would otherwise keep forever (a completed job for an hour, or the newest 1,000; a
 * failed one for 7 days, or the newest 10,000, as the kicks keep theirs). The inbox in Postgres is
 * what makes a job id idempotent, not the job kept in Redis.
 */
export const BULLMQ_WORKER_DEFAULTS = {
  lockDuration: 60_000,
  stalledInterval: 30_000,
  maxStalledCount: 3,
  removeOnComplete: { age: 3_600, count: 1_000 },
  removeOnFail: { age: 7 * 24 * 3_600, count: 10_000 },
} as const;
