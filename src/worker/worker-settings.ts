import type { ResolvedConfig } from '../config/index.js';
import type { DrainSettings } from './worker-context.js';

/** Drain settings from the configuration (see `DrainSettings`), `overrides` on top (tests, embedders). */
export function drainSettings(config: ResolvedConfig, overrides: Partial<DrainSettings> = {}): DrainSettings {
  return {
    leaseTtlMs: config.worker.leaseTtlMs,
    ...config.worker.drain,
    maxInputBytes: config.worker.maxInputBytes,
    ...overrides,
  };
}

/** BullMQ worker options: a generous lock (LLM turns are long), stalled jobs redelivered (fenced, so safe). */
export const BULLMQ_WORKER_DEFAULTS = {
  lockDuration: 60_000,
  stalledInterval: 30_000,
  maxStalledCount: 3,
} as const;
