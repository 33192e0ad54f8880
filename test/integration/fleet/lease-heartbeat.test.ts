import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolRegistry, type AnyToolDefinition, type ToolContext } from '../../../src/core/tools/index.js';
import { ScriptedLlm } from '../../../src/llm/scripted-llm.js';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { deferred, drainOutcomes, sessionEvents } from './fixtures/fleet-helpers.js';

/**
 * The lease over time (I3): the heartbeat keeps a turn longer than the lease TTL
 * (R11), and a holder whose lease was taken stops at its next heartbeat and writes nothing more (the
 * in-process form of R2; the SIGSTOPped process is in zombie-worker.test.ts).
 */
describe('lease heartbeat and loss (R11, R2 in process)', () => {
  let fleet: FleetFixture;

  beforeAll(async () => {
    fleet = await FleetFixture.create('heartbeat', { LEASE_TTL_MS: '1500' });
  });

  afterAll(async () => {
    await fleet?.close();
  });

  /** A tool that takes `ms` and counts its runs; `started` resolves at the first one. */
  function slowTool(ms: number) {
    const runs: string[] = [];
    const started = deferred();
    const tool = {
      name: 'slow',
      description: 'Takes a while.',
      parameters: { type: 'object', properties: {} },
      timeoutMs: 60_000,
      execute: async (_args: Record<string, never>, ctx: ToolContext) => {
        runs.push(ctx.idempotencyKey);
        started.resolve();
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, ms);
          ctx.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(ctx.signal.reason as Error);
          });
        });
        return `slept ${ms} ms`;
      },
    };
    return { tools: ToolRegistry.from([tool as unknown as AnyToolDefinition]), runs, started: started.promise };
  }

  it('R11: a turn longer than the lease TTL (a 4 s tool, 1.5 s lease) completes on its first holder: the heartbeat renews the lease', async () => {
    const sessionId = 'r11-long-turn';
    const slow = slowTool(4_000);
    const llm = new ScriptedLlm([{ toolCalls: [{ id: 'long', name: 'slow', arguments: {} }] }, { text: 'finished the long turn' }]);
    const holder = await fleet.startWorker({ llm, tools: slow.tools, settings: { sweepEveryMs: 300, sweepGraceMs: 200 } });
    try {
      await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'take your time' } });
      await slow.started;
      const token = (await fleet.store.getSession(sessionId))!.lease.token;
      // A second worker, with a sweeper that would take over any session whose lease lapsed.
      const rival = new ScriptedLlm([], { whenExhausted: 'error' });
      const other = await fleet.startWorker({ llm: rival, tools: slowTool(4_000).tools, settings: { sweepEveryMs: 300, sweepGraceMs: 200 } });
      const [input] = await fleet.waitForSessionIdle(sessionId, 1, 30_000);
      expect(input).toMatchObject({ status: 'done', attempts: 1, result: { status: 'completed', finalText: 'finished the long turn' } });
      expect(slow.runs).toEqual([`${sessionId}:long`]);
      expect(rival.requests).toEqual([]);
      // One lease for the whole turn: nobody took it over in the meantime.
      expect((await fleet.store.getSession(sessionId))!.lease.token).toBe(token);
      expect((await sessionEvents(fleet.redis, fleet.config.queueName, sessionId)).filter((event) => event.type === 'input_resumed')).toEqual([]);
      await other.close();
    } finally {
      await holder.close();
    }
  });

  it('R2 in process: a holder whose lease was taken over stops at its next heartbeat, mid-tool, and writes nothing more', async () => {
    const sessionId = 'r2-lease-taken';
    const slow = slowTool(30_000);
    const llm = new ScriptedLlm([{ toolCalls: [{ id: 'stuck', name: 'slow', arguments: {} }] }]);
    const zombie = await fleet.startWorker({ llm, tools: slow.tools, settings: { sweepEveryMs: 3_600_000 } });
    try {
      await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'start' } });
      await slow.started;
      const before = await fleet.store.loadHistory(sessionId);
      const zombieToken = (await fleet.store.getSession(sessionId))!.lease.token;
      // Its lease lapses (as when its process is frozen) and someone else takes the session.
      await fleet.pool.query(`UPDATE sessions SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [sessionId]);
      const taken = await fleet.store.acquireLease({ sessionId, owner: 'new-holder', ttlMs: 600_000 });
      if (!taken.acquired) throw new Error('takeover failed');
      expect(taken.token).toBeGreaterThan(zombieToken);
      await fleet.waitFor('the zombie drain to stop with lease_lost', async () =>
        (await drainOutcomes(fleet.redis, fleet.config.queueName)).some((outcome) => outcome.kind === 'lease_lost') ? true : undefined,
      );
      // Nothing was written after the takeover: no tool result, no finish, no new message.
      expect(await fleet.store.loadHistory(sessionId)).toEqual(before);
      expect(await fleet.store.getInput(sessionId, 1)).toMatchObject({ status: 'running', attempts: 1 });
      expect((await fleet.store.loadOpenToolCalls(sessionId)).map((call) => [call.toolCallId, call.status])).toEqual([['stuck', 'started']]);
      expect((await fleet.store.getSession(sessionId))!.lease.token).toBe(taken.token);
      await fleet.store.releaseLease({ sessionId, token: taken.token });
    } finally {
      await zombie.close({ graceMs: 1_000 });
    }
  });
});
