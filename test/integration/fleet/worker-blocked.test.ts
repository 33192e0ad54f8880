import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import type { LogLine, WorkerProcess } from '../../support/worker-process.js';
import { fixturePath, ProcessFleet } from './fixtures/process-fleet.js';

/**
 * S4 (docs/invariants.md): no tool can freeze the fleet. A tool that never yields (`for (;;) {}`)
 * blocks its worker's event loop for good — no lease renewal, timer or signal handler runs again —
 * and without a watchdog every worker that took the input over froze in turn, until the fleet
 * stopped. The event-loop watchdog kills a worker blocked past `WORKER_BLOCKED_EXIT_MS`; the test
 * restarts killed workers as a supervisor would. The input's attempts count each takeover, so after
 * `MAX_INPUT_ATTEMPTS` starts it ends `failed` and the fleet runs other sessions again.
 */
describe('S4: a tool that blocks the event loop', () => {
  const BOUND_MS = 3_000;
  let pf: ProcessFleet;
  let supervising = true;

  beforeAll(async () => {
    pf = await ProcessFleet.create('worker_blocked', { LEASE_TTL_MS: '2000' });
  }, 60_000);

  afterAll(async () => {
    supervising = false;
    await pf?.close();
  });

  const env = () =>
    Object.assign({}, pf.workerEnv, {
      LOOPFLEET_TOOLS: fixturePath('blocking-tools.ts'),
      WORKER_BLOCKED_EXIT_MS: String(BOUND_MS),
      MAX_INPUT_ATTEMPTS: '2',
      SWEEP_EVERY_MS: '300',
      SWEEP_GRACE_MS: '200',
    });

  /** Starts a worker that is started again whenever it dies, as a process supervisor would. */
  function supervised(worker: WorkerProcess): WorkerProcess {
    void worker.exited.then(() => {
      if (supervising) supervised(pf.fleet.processes.spawn(env()));
    });
    return worker;
  }

  const send = (sessionId: string, text: string) => acceptAndKick(pf.fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: text } });

  it('kills each worker it froze (one JSON line naming the bound), other workers take over, the input ends failed after MAX_INPUT_ATTEMPTS starts, and a good input completes', async () => {
    const { fleet } = pf;
    await Promise.all([1, 2].map(() => supervised(fleet.processes.spawn(env())).ready()));

    await send('blocked', '[tool:spin {"key":"blocked"}]');
    // Both workers took the input in turn and froze in it: the whole fleet it started with is blocked.
    const frozen = await fleet.waitFor(
      'the spin tool to freeze two workers',
      async () => {
        const pids = [...new Set(pf.runs('blocked').map((run) => run.pid))];
        return pids.length >= 2 ? pids : undefined;
      },
      90_000,
    );
    await send('flowing', 'still flowing');

    const [blocked] = await fleet.waitForSessionIdle('blocked', 1, 90_000);
    expect(blocked).toMatchObject({ status: 'failed', attempts: 3, errorCode: 'system.infrastructure', result: { status: 'failed' } });
    expect(blocked!.errorMessage).toMatch(/^gave up on input 1: started 2 time\(s\) without finishing/);
    const [flowing] = await fleet.waitForSessionIdle('flowing', 1, 90_000);
    expect(flowing).toMatchObject({ status: 'done', result: { status: 'completed', finalText: 'Echo: still flowing' } });
    // The third start gave the input up instead of running it again.
    expect(pf.runs('blocked')).toHaveLength(2);

    for (const pid of frozen) {
      const worker = fleet.processes.all.find((candidate) => candidate.pid === pid)!;
      expect(await worker.waitForExit(30_000), worker.diagnostics()).toEqual({ code: null, signal: 'SIGKILL' });
      const lines = worker.stderr
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as LogLine);
      expect(lines, worker.diagnostics()).toEqual([
        expect.objectContaining({ level: 60, pid, workerId: worker.workerId, variable: 'WORKER_BLOCKED_EXIT_MS', boundMs: BOUND_MS }),
      ]);
      expect(lines[0]!.blockedMs).toBeGreaterThanOrEqual(BOUND_MS);
    }
    // Only the frozen workers died.
    expect(fleet.processes.all.filter((worker) => worker.exit !== null).map((worker) => worker.pid).sort()).toEqual([...frozen].sort());
  }, 240_000);
});
