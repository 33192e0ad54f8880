import type { ResolvedConfig } from '../config/index.js';
import type { DrainSettings } from './worker-context.js';

/** Drain settings from the configuration, with the fleet's defaults (see `DrainSettings`). */
export function drainSettings(config: ResolvedConfig, overrides: Partial<DrainSettings> = {}): DrainSettings {
  return {
    leaseTtlMs: config.worker.leaseTtlMs,
    sliceInputs: 10,
    sliceMs: 30_000,
    maxInputBytes: config.worker.maxInputBytes,
    sweepEveryMs: 5_000,
    sweepGraceMs: 2_000,
    maxInputAttempts: 10,
    ...overrides,
  };
}

/** BullMQ worker options: a generous lock (LLM turns are long), stalled jobs redelivered (fenced, so safe). */
export const BULLMQ_WORKER_DEFAULTS = {
  lockDuration: 60_000,
  stalledInterval: 30_000,
  maxStalledCount: 3,
} as const;
