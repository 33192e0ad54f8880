import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedLlm } from '../../../src/llm/scripted-llm.js';
import { acceptAndKick } from '../../../src/producer/accept-input.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { eventFinishedKey, eventStreamKey } from '../../../src/producer/fleet-keys.js';
import { RedisEventPublisher } from '../../../src/events/event-publisher.js';
import { createLogger } from '../../../src/observability/logger.js';
import { republishLostFinishes } from '../../../src/worker/lost-finish-events.js';
import type { WorkerContext } from '../../../src/worker/worker-context.js';
import { heldReply, InstrumentedStore, sessionEvents } from './fixtures/fleet-helpers.js';
import type { StepCommit } from '../../../src/core/ports/session-store.js';
import type { FleetEvent } from '../../../src/events/fleet-events.js';

/**
 * I6 across a crash: `input_finished` is published after the input's terminal commit, so a holder
 * that dies between the two leaves the input finished without its event. The next drain of the
 * session publishes it — once — before running anything else. And a run resumed by another holder
 * publishes the events of the inputs its predecessor steered into it.
 */
describe('exactly one input_finished per input, across a crash', () => {
  let fleet: FleetFixture;

  beforeAll(async () => {
    fleet = await FleetFixture.create('finish_events');
  });

  afterAll(async () => {
    await fleet?.close();
  });

  const finishedSeqs = async (sessionId: string) =>
    (await sessionEvents(fleet.redis, fleet.config.queueName, sessionId)).filter((event) => event.type === 'input_finished').map((event) => event.data.inputSeq);

  /**
   * As after a crash or a stall: the session's lease lapses and is taken once; then a new worker
   * drains a second input (repairing what the first holder owes) until both finishes are out.
   */
  async function takeOverAndSendSecond(sessionId: string): Promise<Awaited<ReturnType<FleetFixture['startWorker']>>> {
    await fleet.pool.query(`UPDATE sessions SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [sessionId]);
    const taken = await fleet.store.acquireLease({ sessionId, owner: 'test', ttlMs: 60_000 });
    if (!taken.acquired) throw new Error('lease not taken');
    await fleet.store.releaseLease({ sessionId, token: taken.token });
    const successor = await fleet.startWorker({ settings: { sweepEveryMs: 300, sweepGraceMs: 200 } });
    await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'second' } });
    await fleet.waitForSessionIdle(sessionId, 2);
    await fleet.waitFor('both input_finished events', async () => ((await finishedSeqs(sessionId)).length >= 2 ? true : undefined));
    return successor;
  }

  /** Takes an input's input_finished back off the stream and out of the finished set: as if it was never published. */
  const unpublish = async (sessionId: string, inputSeq: number) => {
    const finished = (await sessionEvents(fleet.redis, fleet.config.queueName, sessionId)).filter((event) => event.type === 'input_finished' && event.data.inputSeq === inputSeq);
    await fleet.redis.xdel(eventStreamKey(fleet.config.queueName, sessionId), ...finished.map((event) => event.id));
    await fleet.redis.zrem(eventFinishedKey(fleet.config.queueName, sessionId), String(inputSeq));
  };

  /** Runs `inputs` of `sessionId` to the end on a worker of its own, then stops it. */
  const runToEnd = async (sessionId: string, inputs: string[]) => {
    const worker = await fleet.startWorker({ settings: { sweepEveryMs: 3_600_000 } });
    try {
      for (const [n, input] of inputs.entries()) {
        await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input } });
        await fleet.waitForSessionIdle(sessionId, n + 1);
        await fleet.waitFor('its input_finished', async () => ((await finishedSeqs(sessionId)).length >= n + 1 ? true : undefined));
      }
    } finally {
      await worker.close();
    }
  };

  /** What `republishLostFinishes` uses of a worker, on the fixture's connections and a publisher of its own. */
  const repairContext = (publisher: RedisEventPublisher) =>
    ({ store: fleet.store, redis: fleet.redis, queueName: fleet.config.queueName, publisher, logger: createLogger({ level: 'silent', format: 'json', redactContent: true }) }) as unknown as WorkerContext;

  it('a holder that died between the terminal commit and the XADD: the next drain publishes the lost event, once, first', async () => {
    const sessionId = 'lost-finish';
    const store = new InstrumentedStore();
    // Right after the terminal commit of input 1, before input_finished is published: the holder dies there.
    const dying = store.hold('commitStep', {
      when: (args) => (args[0] as StepCommit).sessionId === sessionId && (args[0] as StepCommit).input?.seq === 1,
      after: true,
    });
    const holder = await fleet.startWorker({ wrapStore: store.wrap, settings: { sweepEveryMs: 3_600_000 } });
    let successor: Awaited<ReturnType<FleetFixture['startWorker']>> | undefined;
    try {
      await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'first' } });
      await dying.entered;
      expect(await fleet.store.getInput(sessionId, 1)).toMatchObject({ status: 'done', result: { finalText: 'Echo: first' } });
      expect(await finishedSeqs(sessionId)).toEqual([]);
      // As after a crash: the lease lapses and is taken, and the dead holder's drain job stays active.
      successor = await takeOverAndSendSecond(sessionId);
      const events = await sessionEvents(fleet.redis, fleet.config.queueName, sessionId);
      const finished = events.filter((event) => event.type === 'input_finished');
      expect(finished.map((event) => [event.data.inputSeq, event.data.status, event.data.finalText])).toEqual([
        [1, 'completed', 'Echo: first'],
        [2, 'completed', 'Echo: second'],
      ]);
      // Published before the next input started.
      const started2 = events.findIndex((event) => event.type === 'input_started' && event.data.inputSeq === 2);
      expect(events.indexOf(finished[0]!)).toBeLessThan(started2);
    } finally {
      dying.fail(new Error('the process died here'));
      await holder.close({ graceMs: 1_000 });
      await successor?.close();
    }
    expect(await finishedSeqs(sessionId)).toEqual([1, 2]);
  });

  it("a holder that died after its session's last terminal commit, before the XADD: the sweeper finds the unreleased lease and the event is published with no new input", async () => {
    const sessionId = 'lost-last-finish';
    const worker = await fleet.startWorker({ settings: { sweepEveryMs: 3_600_000 } });
    try {
      await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'the only one' } });
      await fleet.waitForSessionIdle(sessionId, 1);
      await fleet.waitFor('its input_finished', async () => ((await finishedSeqs(sessionId)).length >= 1 ? true : undefined));
    } finally {
      await worker.close();
    }
    // The state a kill -9 between the terminal commit and the XADD leaves: the input is done in
    // Postgres, its event is not on the stream (nor, written by the same script, in the finished
    // set), the dead holder's lease lapsed without a release, and the session still owes the finish
    // (the terminal commit set the flag; no release cleared it).
    await unpublish(sessionId, 1);
    expect((await fleet.pool.query(`SELECT finishes_owed FROM sessions WHERE id = $1`, [sessionId])).rows[0]).toEqual({ finishes_owed: false });
    await fleet.pool.query(`UPDATE sessions SET lease_owner = 'dead-worker', lease_expires_at = now() - interval '1 second', finishes_owed = true WHERE id = $1`, [sessionId]);
    expect(await finishedSeqs(sessionId)).toEqual([]);

    const sweeping = await fleet.startWorker({ settings: { sweepEveryMs: 300, sweepGraceMs: 200 } });
    try {
      await fleet.waitFor('the lost input_finished', async () => ((await finishedSeqs(sessionId)).length >= 1 ? true : undefined));
      // The drain that published it released the lease, so the session is not swept again.
      await fleet.waitFor('the lease released', async () => ((await fleet.store.getSession(sessionId))?.lease.expiresAt === null ? true : undefined));
    } finally {
      await sweeping.close();
    }
    const events = await sessionEvents(fleet.redis, fleet.config.queueName, sessionId);
    expect(events.filter((event) => event.type === 'input_finished').map((event) => [event.data.inputSeq, event.data.status, event.data.finalText])).toEqual([
      [1, 'completed', 'Echo: the only one'],
    ]);
    expect((await fleet.store.getInput(sessionId, 1))?.attempts).toBe(1);
  });

  it("a holder stalled past its lease after the terminal commit (not dead): the next drain republishes the finish, and the stalled holder's own publish, arriving after it, is left out", async () => {
    const sessionId = 'stalled-finish';
    const store = new InstrumentedStore();
    const warnings: { msg?: string; inputSeq?: number }[] = [];
    const logger = createLogger({ level: 'warn', format: 'json', redactContent: true, destination: { write: (line: string) => void warnings.push(JSON.parse(line)) } });
    // Right after the terminal commit of input 1, before input_finished is published: the holder stalls there.
    const stalled = store.hold('commitStep', {
      when: (args) => (args[0] as StepCommit).sessionId === sessionId && (args[0] as StepCommit).input?.seq === 1,
      after: true,
    });
    const holder = await fleet.startWorker({ wrapStore: store.wrap, logger, settings: { sweepEveryMs: 3_600_000 } });
    let successor: Awaited<ReturnType<FleetFixture['startWorker']>> | undefined;
    try {
      await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'first' } });
      await stalled.entered;
      // Its lease lapses and is taken: the next drain repairs the finish it has not published.
      successor = await takeOverAndSendSecond(sessionId);
      // The stalled holder wakes up and publishes input 1's finish after all.
      stalled.release();
      await fleet.waitFor('the stalled holder to publish its late input_finished', async () =>
        warnings.some((line) => line.inputSeq === 1 && line.msg?.startsWith('input_finished was already published') === true) ? true : undefined,
      );
    } finally {
      stalled.release();
      await holder.close({ graceMs: 1_000 });
      await successor?.close();
    }
    const events = await sessionEvents(fleet.redis, fleet.config.queueName, sessionId);
    expect(events.filter((event) => event.type === 'input_finished').map((event) => [event.data.inputSeq, event.data.finalText])).toEqual([
      [1, 'Echo: first'],
      [2, 'Echo: second'],
    ]);
    expect(events.map((event) => event.data.seq)).toEqual(events.map((_, i) => i + 1));
  });

  it("the repair against a late duplicate, at the publisher: whichever of the repair's and the stalled holder's input_finished comes first is the one written", async () => {
    const sessionId = 'repair-vs-late';
    await runToEnd(sessionId, ['one']);
    const input = (await fleet.store.getInput(sessionId, 1))!;
    const late: FleetEvent = { type: 'input_finished', ...input.result!, error: null };
    const repairer = new RedisEventPublisher(fleet.redis, { queueName: fleet.config.queueName });
    const zombie = new RedisEventPublisher(fleet.redis, { queueName: fleet.config.queueName });
    try {
      // The repair first, then the stalled holder.
      await unpublish(sessionId, 1);
      expect(await republishLostFinishes(repairContext(repairer), sessionId, null)).toBe(1);
      expect(await zombie.publish(sessionId, 1, late)).toBe('');
      expect(await finishedSeqs(sessionId)).toEqual([1]);
      // The stalled holder first, then the repair: it sees the finish written (the set) and writes nothing.
      await unpublish(sessionId, 1);
      expect(await zombie.publish(sessionId, 1, late)).not.toBe('');
      expect(await republishLostFinishes(repairContext(repairer), sessionId, null)).toBe(0);
      expect(await finishedSeqs(sessionId)).toEqual([1]);
      expect([repairer.duplicateFinishes, zombie.duplicateFinishes]).toEqual([0, 1]);
    } finally {
      await Promise.all([repairer.close(), zombie.close()]);
    }
  });

  it('the repair on a stream written before the finished set existed: it still reads the stream, and publishes only what is missing there', async () => {
    const sessionId = 'repair-before-set';
    await runToEnd(sessionId, ['old']);
    const publisher = new RedisEventPublisher(fleet.redis, { queueName: fleet.config.queueName });
    const setKey = eventFinishedKey(fleet.config.queueName, sessionId);
    try {
      // The finish is on the stream, the set does not exist: nothing to repair.
      await fleet.redis.del(setKey);
      expect(await republishLostFinishes(repairContext(publisher), sessionId, null)).toBe(0);
      expect(await finishedSeqs(sessionId)).toEqual([1]);
      // Neither has it: it is published, and recorded from then on.
      await unpublish(sessionId, 1);
      expect(await republishLostFinishes(repairContext(publisher), sessionId, null)).toBe(1);
      expect(await finishedSeqs(sessionId)).toEqual([1]);
      expect(await fleet.redis.zrange(setKey, 0, -1)).toEqual(['1']);
    } finally {
      await publisher.close();
    }
  });

  it('a drain that published every finish says so on release, and the next drain of the session skips the check', async () => {
    const sessionId = 'nothing-owed';
    const store = new InstrumentedStore();
    const worker = await fleet.startWorker({ wrapStore: store.wrap, settings: { sweepEveryMs: 3_600_000 } });
    try {
      for (const [n, text] of ['one', 'two'].entries()) {
        await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: text } });
        await fleet.waitForSessionFinished(sessionId, n + 1);
        await fleet.waitFor('the lease released', async () => ((await fleet.store.getSession(sessionId))?.lease.expiresAt === null ? true : undefined));
      }
    } finally {
      await worker.close();
    }
    const releases = (store.calls.get('releaseLease') ?? []).map(([params]) => params as { sessionId: string; finishesPublished?: boolean });
    expect(releases.filter((params) => params.sessionId === sessionId).map((params) => params.finishesPublished)).toEqual([true, true]);
    // The check reads the last finished input (getInput) and the stream; the second drain did neither.
    expect((store.calls.get('getInput') ?? []).filter(([id]) => id === sessionId)).toEqual([]);
    expect(await finishedSeqs(sessionId)).toEqual([1, 2]);
  });

  it('a drain whose input_finished Redis refused releases the lease with the finish still owed', async () => {
    const sessionId = 'finish-refused';
    // A stream key holding a string: every event write of this session fails inside the script.
    await fleet.redis.set(eventStreamKey(fleet.config.queueName, sessionId), 'not a stream');
    const store = new InstrumentedStore();
    const worker = await fleet.startWorker({ wrapStore: store.wrap, settings: { sweepEveryMs: 3_600_000 } });
    try {
      await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'unheard' } });
      await fleet.waitForSessionIdle(sessionId, 1);
      await fleet.waitFor('a release', async () => ((store.calls.get('releaseLease') ?? []).some(([params]) => (params as { sessionId: string }).sessionId === sessionId) ? true : undefined));
    } finally {
      await worker.close();
      await fleet.redis.del(eventStreamKey(fleet.config.queueName, sessionId));
    }
    const releases = (store.calls.get('releaseLease') ?? []).map(([params]) => params as { sessionId: string; finishesPublished?: boolean });
    expect(releases.filter((params) => params.sessionId === sessionId).every((params) => params.finishesPublished === false)).toBe(true);
    expect((await fleet.pool.query(`SELECT finishes_owed FROM sessions WHERE id = $1`, [sessionId])).rows[0]).toEqual({ finishes_owed: true });
  });

  it('steering applied by a holder that stopped mid-run: the holder that resumes the input publishes the steered input\'s input_finished too', async () => {
    const sessionId = 'steered-then-lost';
    const first = heldReply({ text: 'Working on X.' });
    const second = heldReply({ text: 'never said' });
    const holder = await fleet.startWorker({ llm: new ScriptedLlm([first.step, second.step]) });
    await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'do X' } });
    await first.entered;
    await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', mode: 'steer', payload: { input: 'also Y' } });
    first.release();
    // The steer is applied at the round boundary; the holder stops during the next call.
    await second.entered;
    expect(await fleet.store.getInput(sessionId, 2)).toMatchObject({ status: 'done', steeredInto: 1, result: null });
    await holder.close({ force: true });
    const heir = await fleet.startWorker({ llm: new ScriptedLlm([{ text: 'X and Y done.' }]) });
    try {
      const inputs = await fleet.waitForSessionFinished(sessionId, 2);
      expect(inputs.map((input) => [input.status, input.result?.finalText])).toEqual([
        ['done', 'X and Y done.'],
        ['done', 'X and Y done.'],
      ]);
      const finished = (await sessionEvents(fleet.redis, fleet.config.queueName, sessionId)).filter((event) => event.type === 'input_finished');
      expect(finished.map((event) => [event.data.inputSeq, event.data.steeredInto ?? null])).toEqual([
        [1, null],
        [2, 1],
      ]);
    } finally {
      await heir.close();
    }
  });

  it('a normal drain after a normal finish publishes nothing again', async () => {
    const sessionId = 'no-repair-needed';
    const worker = await fleet.startWorker();
    try {
      for (const text of ['a', 'b', 'c']) {
        await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: text } });
        await fleet.waitForSessionIdle(sessionId, ['a', 'b', 'c'].indexOf(text) + 1);
      }
      await fleet.waitFor('three input_finished events', async () => ((await finishedSeqs(sessionId)).length >= 3 ? true : undefined));
      expect(await finishedSeqs(sessionId)).toEqual([1, 2, 3]);
    } finally {
      await worker.close();
    }
  });
});
