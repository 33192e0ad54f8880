import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { bullmqWorkerOptions, drainSettings } from '../../../src/worker/worker-settings.js';

describe('drainSettings', () => {
  it('takes the drain settings from the environment, with the documented defaults', () => {
    expect(drainSettings(loadConfig({}))).toEqual({
      leaseTtlMs: 30_000,
      sliceInputs: 10,
      sliceMs: 30_000,
      maxInputBytes: 1_048_576,
      sweepEveryMs: 5_000,
      sweepGraceMs: 2_000,
      maxInputAttempts: 10,
      timerHookTimeoutMs: 30_000,
    });
    const config = loadConfig({ DRAIN_SLICE_INPUTS: '1', DRAIN_SLICE_MS: '500', SWEEP_EVERY_MS: '250', SWEEP_GRACE_MS: '0', MAX_INPUT_ATTEMPTS: '3', LEASE_TTL_MS: '2000' });
    expect(drainSettings(config)).toMatchObject({ leaseTtlMs: 2000, sliceInputs: 1, sliceMs: 500, sweepEveryMs: 250, sweepGraceMs: 0, maxInputAttempts: 3 });
  });

  it('lets an embedder override any of them in process', () => {
    expect(drainSettings(loadConfig({ DRAIN_SLICE_INPUTS: '4' }), { sliceInputs: 2, sweepEveryMs: 3_600_000 })).toMatchObject({ sliceInputs: 2, sweepEveryMs: 3_600_000, sliceMs: 30_000 });
  });
});

describe('bullmqWorkerOptions', () => {
  it('locks jobs for WORKER_JOB_LOCK_MS and checks for stalled ones every half of it', () => {
    expect(bullmqWorkerOptions(loadConfig({}).worker.jobLockMs)).toMatchObject({ lockDuration: 10_000, stalledInterval: 5_000, maxStalledCount: 3 });
    expect(bullmqWorkerOptions(loadConfig({ WORKER_JOB_LOCK_MS: '5001' }).worker.jobLockMs)).toMatchObject({ lockDuration: 5_001, stalledInterval: 2_501 });
  });
});
