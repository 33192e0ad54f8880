import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { drainOutcomes, sessionEvents } from './fixtures/fleet-helpers.js';
import { ProcessFleet } from './fixtures/process-fleet.js';

/**
 * R2, the zombie (docs/invariants.md): a worker PROCESS frozen with SIGSTOP inside a tool call, past
 * its 2 s lease. Its BullMQ job stays active (its lock outlives the freeze), so only the lease can tell
 * the fleet it is gone: another worker takes the session over with a higher fencing token and
 * finishes the input; when the frozen one is continued, every write it attempts is refused
 * (`lease.lost`) and the history holds each message once.
 */
describe('R2: a worker process paused past its lease', () => {
  let pf: ProcessFleet;

  beforeAll(async () => {
    pf = await ProcessFleet.create('zombie', { LEASE_TTL_MS: '2000' });
  }, 60_000);

  afterAll(async () => {
    await pf?.close();
  });

  it('SIGSTOP mid-tool: another worker takes over (higher token), the SIGCONT-ed one is fenced out, every input done exactly once', async () => {
    const { fleet } = pf;
    const sessionId = 'zombie';
    // A lock that outlives the freeze, as the premise says: with the default 10 s one a slow takeover
    // could let it lapse, and the woken zombie would stop for the lost lock before any write is refused.
    const zombie = await fleet.processes.start(Object.assign({}, pf.workerEnv, { WORKER_JOB_LOCK_MS: '60000' }));
    await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: '[tool:hold {"key":"zombie"}]' } });
    await pf.toolStarted('zombie', zombie.pid);
    const zombieLease = (await fleet.store.getSession(sessionId))!.lease;
    expect(zombieLease.owner).toBe(zombie.workerId);
    const rescuer = await fleet.processes.start(pf.workerEnv);
    // A second input queued behind the frozen one: it must run once, after it, on the new holder.
    await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'after the takeover' } });

    zombie.pause();
    const frozenAt = Date.now();
    // The rescuer's sweeper sees the lapsed lease, replaces the zombie's stuck drain job, takes the
    // session with a higher token and re-runs the in-doubt call (policy retry).
    await pf.toolStarted('zombie', rescuer.pid, 90_000);
    const takeoverMs = Date.now() - frozenAt;
    const rescuerLease = (await fleet.store.getSession(sessionId))!.lease;
    expect(rescuerLease.owner).toBe(rescuer.workerId);
    expect(rescuerLease.token).toBeGreaterThan(zombieLease.token);
    pf.release('zombie');
    const inputs = await fleet.waitForSessionFinished(sessionId, 2, 60_000);
    expect(inputs.map((input) => [input.status, input.attempts, input.result?.finalText])).toEqual([
      ['done', 2, 'Done: held zombie'],
      ['done', 1, 'Echo: after the takeover'],
    ]);
    const history = await fleet.transcript(sessionId);

    // The zombie wakes up inside its tool call, which now returns: its writes are refused.
    zombie.resume();
    const lost = await zombie.waitForLog((line) => line.msg?.startsWith('lease lost') === true, 'the zombie to report lease lost', 30_000);
    expect(lost).toMatchObject({ sessionId, leaseToken: zombieLease.token });
    expect(await fleet.transcript(sessionId)).toEqual(history);
    expect(history).toEqual([
      'user: [tool:hold {"key":"zombie"}]',
      'assistant: ',
      'tool: held zombie',
      'assistant: Done: held zombie',
      'user: after the takeover',
      'assistant: Echo: after the takeover',
    ]);
    // Its drain job completes just after that log line (release, then BullMQ's completion): wait for it.
    const leaseLost = async () => (await drainOutcomes(fleet.redis, fleet.config.queueName)).filter((outcome) => outcome.kind === 'lease_lost');
    await fleet.waitFor('the zombie drain to complete as lease_lost', async () => ((await leaseLost()).length > 0 ? true : undefined));
    expect(await leaseLost()).toHaveLength(1);
    const ledger = await fleet.pool.query<{ status: string; attempts: number }>('SELECT status, attempts FROM tool_calls WHERE session_id = $1', [sessionId]);
    expect(ledger.rows).toEqual([{ status: 'completed', attempts: 2 }]);
    const events = await sessionEvents(fleet.redis, fleet.config.queueName, sessionId);
    expect(events.filter((event) => event.type === 'input_finished').map((event) => event.data.inputSeq)).toEqual([1, 2]);
    expect(events.filter((event) => event.type === 'input_resumed').map((event) => event.data.reason)).toEqual(['worker_lost']);
    // The zombie is alive and well, not crashed: it stops cleanly.
    zombie.signal('SIGTERM');
    expect(await zombie.waitForExit(30_000)).toEqual({ code: 0, signal: null });
    console.info(`zombie: takeover ${takeoverMs} ms after SIGSTOP (lease TTL 2000 ms, sweeper every 5000 ms)`);
  }, 240_000);
});
