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
 * BullMQ worker options: stalled jobs redelivered (fenced, so safe), and a bounded retention for jobs
 * that set none — the raw path's `send` and `resume` jobs, which BullMQ would otherwise keep forever
 * (a completed job for an hour, or the newest 1,000; a failed one for 7 days, or the newest 10,000,
 * as the kicks keep theirs). The inbox in Postgres is what makes a job id idempotent, not the job
 * kept in Redis. The lock and the stalled check are {@link bullmqWorkerOptions}'.
 */
export const BULLMQ_WORKER_DEFAULTS = {
  maxStalledCount: 3,
  removeOnComplete: { age: 3_600, count: 1_000 },
  removeOnFail: { age: 7 * 24 * 3_600, count: 10_000 },
} as const;

/**
 * {@link BULLMQ_WORKER_DEFAULTS} with the job lock (`WORKER_JOB_LOCK_MS`) and a stalled check every
 * half of it. A raw job whose worker died before ingesting it is in Redis alone, and only the stalled
 * check gives it to another worker: its lock lapses at most a lock after the death (BullMQ renews it
 * every quarter to half of it), and two checks later at most it is moved back to wait, so within
 * twice the lock (docs/fleet.md, "The job lock"). Drains renew their lock all along, so a long drain
 * keeps it; Redis unreachable or the event loop blocked for half a lock to a lock may lose it, which
 * cancels the drain (`lockRenewalFailed`) and hands its session back: work redone, nothing lost.
 */
export function bullmqWorkerOptions(jobLockMs: number) {
  return Object.assign({ lockDuration: jobLockMs, stalledInterval: Math.round(jobLockMs / 2) }, BULLMQ_WORKER_DEFAULTS);
}
