import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import type { WorkerProcess } from '../../support/worker-process.js';
import { sessionEvents } from './fixtures/fleet-helpers.js';
import { ProcessFleet } from './fixtures/process-fleet.js';

/**
 * Shutdown of real `loopfleet worker` processes (docs/fleet.md, "Shutdown"): SIGTERM stops taking
 * work, finishes the input in flight within the grace period and exits 0, handing the rest of the
 * session to the fleet; a second SIGTERM, or `--grace 0`, aborts the input in flight and hands the
 * session back at once, and another worker completes it.
 */
describe('worker process shutdown', () => {
  let pf: ProcessFleet;
  /** The worker that stays: takes what the stopped ones hand back. */
  let stayer: WorkerProcess;

  beforeAll(async () => {
    pf = await ProcessFleet.create('shutdown');
  }, 60_000);

  afterAll(async () => {
    await pf?.close();
  });

  const send = (sessionId: string, text: string) => acceptAndKick(pf.fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: text } });

  /**
   * Sends an input that only `target` can take: the stayer (if any) is frozen while the job is
   * handed out, so it cannot fetch it.
   */
  async function sendTo(target: WorkerProcess, sessionId: string, key: string): Promise<void> {
    const other = stayer !== undefined && stayer.exit === null ? stayer : null;
    other?.pause();
    try {
      await send(sessionId, `[tool:hold {"key":"${key}"}]`);
      await pf.toolStarted(key, target.pid);
    } finally {
      other?.resume();
    }
  }

  it('SIGTERM: the input in flight finishes within the grace period, the process exits 0, and the rest of the session is handed back', async () => {
    const worker = await pf.fleet.processes.start(pf.workerEnv);
    const sessionId = 'graceful';
    await send(sessionId, '[tool:hold {"key":"graceful"}]');
    await pf.toolStarted('graceful', worker.pid);
    await send(sessionId, 'queued behind it');
    worker.signal('SIGTERM');
    await worker.waitForLog((line) => line.msg === 'shutting down', 'shutting down');
    // Still running: it waits for its input rather than exiting.
    expect(worker.exit).toBeNull();
    expect(await pf.fleet.store.getInput(sessionId, 1)).toMatchObject({ status: 'running' });
    pf.release('graceful');
    const exit = await worker.waitForExit(30_000);
    expect(exit, worker.diagnostics()).toEqual({ code: 0, signal: null });
    expect(await pf.fleet.store.getInput(sessionId, 1)).toMatchObject({ status: 'done', attempts: 1, result: { status: 'completed', finalText: 'Done: held graceful' } });
    expect(pf.runs('graceful').map((run) => [run.pid, run.event])).toEqual([
      [worker.pid, 'start'],
      [worker.pid, 'end'],
    ]);
    // It took no new work while stopping: the queued input was handed back, untouched.
    expect(await pf.fleet.store.getInput(sessionId, 2)).toMatchObject({ status: 'pending', attempts: 0 });
    stayer = await pf.fleet.processes.start(pf.workerEnv);
    const inputs = await pf.fleet.waitForSessionIdle(sessionId, 2, 30_000);
    expect(inputs[1]).toMatchObject({ status: 'done', attempts: 1, result: { finalText: 'Echo: queued behind it' } });
  }, 180_000);

  it('a second SIGTERM aborts the input in flight and hands the session back; another worker completes it', async () => {
    const worker = await pf.fleet.processes.start(pf.workerEnv);
    const sessionId = 'second-signal';
    await sendTo(worker, sessionId, 'forced');
    worker.signal('SIGTERM');
    await worker.waitForLog((line) => line.msg === 'shutting down', 'shutting down');
    worker.signal('SIGTERM');
    const exit = await worker.waitForExit(30_000);
    const exitedAt = Date.now();
    expect(exit, worker.diagnostics()).toEqual({ code: 0, signal: null });
    expect(worker.logs.some((line) => line.msg === 'forced shutdown')).toBe(true);
    // The stayer takes the session over at once (the hand-back kick, not the sweeper) and re-runs the call.
    await pf.toolStarted('forced', stayer.pid);
    const takeoverMs = Date.now() - exitedAt;
    pf.release('forced');
    const [input] = await pf.fleet.waitForSessionFinished(sessionId, 1, 30_000);
    expect(input).toMatchObject({ status: 'done', attempts: 2, result: { status: 'completed', finalText: 'Done: held forced' } });
    expect(pf.runs('forced').map((run) => [run.pid, run.event])).toEqual([
      [worker.pid, 'start'],
      [stayer.pid, 'start'],
      [stayer.pid, 'end'],
    ]);
    const events = await sessionEvents(pf.fleet.redis, pf.fleet.config.queueName, sessionId);
    expect(events.filter((event) => event.type === 'input_resumed').map((event) => event.data.reason)).toEqual(['worker_lost']);
    expect(events.filter((event) => event.type === 'input_finished')).toHaveLength(1);
    console.info(`shutdown: hand-back to another worker took ${takeoverMs} ms`);
  }, 180_000);

  it('--grace 0: one SIGTERM hands the session back at once; another worker completes it', async () => {
    const worker = await pf.fleet.processes.start(pf.workerEnv, ['--grace', '0']);
    const sessionId = 'grace-zero';
    await sendTo(worker, sessionId, 'no-grace');
    worker.signal('SIGTERM');
    const exit = await worker.waitForExit(30_000);
    expect(exit, worker.diagnostics()).toEqual({ code: 0, signal: null });
    await pf.toolStarted('no-grace', stayer.pid);
    pf.release('no-grace');
    const [input] = await pf.fleet.waitForSessionIdle(sessionId, 1, 30_000);
    expect(input).toMatchObject({ status: 'done', attempts: 2, result: { finalText: 'Done: held no-grace' } });
    expect(pf.runs('no-grace').filter((run) => run.event === 'end').map((run) => run.pid)).toEqual([stayer.pid]);
  }, 180_000);
});
