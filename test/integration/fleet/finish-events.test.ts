import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedLlm } from '../../../src/llm/scripted-llm.js';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { eventFinishedKey, eventStreamKey } from '../../../src/fleet/fleet-keys.js';
import { RedisEventPublisher } from '../../../src/events/event-publisher.js';
import { createLogger } from '../../../src/observability/logger.js';
import { republishLostFinishes } from '../../../src/worker/lost-finish-events.js';
import type { WorkerContext } from '../../../src/worker/worker-context.js';
import { heldReply, InstrumentedStore, sessionEvents } from './fixtures/fleet-helpers.js';
import type { SessionStore, StepCommit } from '../../../src/core/ports/session-store.js';
import type { InputResult } from '../../../src/core/session-types.js';
import type { FleetEvent } from '../../../src/fleet/fleet-events.js';

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

  /** Store reads of the repair: the finished inputs it looks through (a `listInputs` of terminal statuses). */
  const repairReads = (store: InstrumentedStore, sessionId: string) =>
    (store.calls.get('listInputs') ?? []).filter(([id, options]) => id === sessionId && [(options as { status?: unknown } | undefined)?.status].flat().includes('cancelled'));

  const noUsage = { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 0, llmCalls: 0, costUsd: 0, costPicoUsd: 0 };
  const deadResult: InputResult = { status: 'completed', finalText: 'done by a holder that died', rounds: 0, toolCalls: 0, usage: noUsage };

  /** As after a kill -9 or a stall: the holder's lease lapses without a release. */
  const lapse = (sessionId: string) => fleet.pool.query(`UPDATE sessions SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [sessionId]);

  /** Publishes events of a session as a worker or producer would (the repair decides from the stream). */
  async function publish(sessionId: string, inputSeq: number, event: FleetEvent): Promise<void> {
    const publisher = new RedisEventPublisher(fleet.redis, { queueName: fleet.config.queueName });
    try {
      await publisher.publish(sessionId, inputSeq, event);
    } finally {
      await publisher.close();
    }
  }

  /** `acceptAndKick` without the kick: the input and its input_accepted event. */
  async function accept(sessionId: string, input: string, mode: 'queue' | 'steer' = 'queue'): Promise<void> {
    const accepted = await fleet.store.acceptInput({ sessionId, kind: 'send', mode, payload: { input }, maxBytes: fleet.config.worker.maxInputBytes });
    await publish(sessionId, accepted.seq, { type: 'input_accepted', kind: 'send', mode, inputId: accepted.inputId });
  }

  /**
   * A holder that took the lease with input 1, ran it to its terminal commit (after `during`, given its
   * token) and died before its input_finished: the stream holds the input's input_accepted and
   * input_started only, the session owes the finish, and the lease lapses unreleased.
   */
  async function diedAfterTerminalCommit(sessionId: string, during: (token: number) => Promise<void> = async () => {}): Promise<void> {
    await accept(sessionId, 'one');
    const lease = await fleet.store.acquireLeaseAndClaim({ sessionId, owner: 'dead-worker', ttlMs: 60_000 });
    if (!lease.acquired || lease.claimed?.input.seq !== 1) throw new Error('the dead holder did not take input 1');
    await publish(sessionId, 1, { type: 'input_started', attempt: 1, agent: { name: 'default', version: 'v1' } });
    await during(lease.token);
    await fleet.store.commitStep({ sessionId, leaseToken: lease.token, input: { seq: 1, status: 'done', result: deadResult } });
    await lapse(sessionId);
  }

  /**
   * Until the session's `inputs` are finished, its lease released and no finish owed any more — the
   * state in which nothing would repair a finish still missing — then the inputs of its input_finished events.
   */
  async function settled(sessionId: string, inputs: number): Promise<unknown[]> {
    await fleet.waitForSessionIdle(sessionId, inputs);
    await fleet.waitFor('the lease released with no finish owed', async () => {
      const row = (await fleet.pool.query(`SELECT lease_expires_at, finishes_owed FROM sessions WHERE id = $1`, [sessionId])).rows[0] as { lease_expires_at: Date | null; finishes_owed: boolean };
      return row.lease_expires_at === null && !row.finishes_owed ? true : undefined;
    });
    return finishedSeqs(sessionId);
  }

  /** The lease a direct repair writes under: no session here was deleted, so none is fenced. */
  const LEASE_TOKEN = 1;

  /** What `republishLostFinishes` uses of a worker, on the fixture's connections and a publisher of its own. */
  const repairContext = (publisher: RedisEventPublisher) =>
    ({ store: fleet.store, redis: fleet.redis, queueName: fleet.config.queueName, queue: fleet.shards, publisher, logger: createLogger({ level: 'silent', format: 'json', redactContent: true }) }) as unknown as WorkerContext;

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
      expect(await republishLostFinishes(repairContext(repairer), sessionId, LEASE_TOKEN, null)).toBe(1);
      expect(await zombie.publish(sessionId, 1, late)).toBe('');
      expect(await finishedSeqs(sessionId)).toEqual([1]);
      // The stalled holder first, then the repair: it sees the finish written (the set) and writes nothing.
      await unpublish(sessionId, 1);
      expect(await zombie.publish(sessionId, 1, late)).not.toBe('');
      expect(await republishLostFinishes(repairContext(repairer), sessionId, LEASE_TOKEN, null)).toBe(0);
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
      expect(await republishLostFinishes(repairContext(publisher), sessionId, LEASE_TOKEN, null)).toBe(0);
      expect(await finishedSeqs(sessionId)).toEqual([1]);
      // Neither has it: it is published, and recorded from then on.
      await unpublish(sessionId, 1);
      expect(await republishLostFinishes(repairContext(publisher), sessionId, LEASE_TOKEN, null)).toBe(1);
      expect(await finishedSeqs(sessionId)).toEqual([1]);
      expect(await fleet.redis.zrange(setKey, 0, -1)).toEqual(['1']);
    } finally {
      await publisher.close();
    }
  });

  it('a holder that died before any event of its input got out, whose input_accepted was lost too: the next drain still publishes the finish, the stream having lost nothing to trimming', async () => {
    // On a stream that begins with its first entry (seq 1) and on a session with no stream at all.
    for (const [sessionId, earlier] of [['never-on-stream', ['one']], ['no-stream-at-all', []]] as const) {
      await runToEnd(sessionId, [...earlier]);
      const seq = earlier.length + 1;
      // Accepted while Redis failed (no input_accepted); its holder ended it and died before its first event.
      await fleet.store.acceptInput({ sessionId, kind: 'send', payload: { input: 'lost' }, maxBytes: fleet.config.worker.maxInputBytes });
      const lease = await fleet.store.acquireLeaseAndClaim({ sessionId, owner: 'dead-worker', ttlMs: 60_000 });
      if (!lease.acquired || lease.claimed?.input.seq !== seq) throw new Error(`the dead holder did not take input ${seq}`);
      await fleet.store.commitStep({ sessionId, leaseToken: lease.token, input: { seq, status: 'done', result: deadResult } });
      await lapse(sessionId);
      expect(await fleet.redis.exists(eventStreamKey(fleet.config.queueName, sessionId))).toBe(earlier.length === 0 ? 0 : 1);
      const successor = await fleet.startWorker({ settings: { sweepEveryMs: 3_600_000 } });
      try {
        await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'next' } });
        expect(await settled(sessionId, seq + 1)).toEqual([...earlier.map((_, n) => n + 1), seq, seq + 1]);
      } finally {
        await successor.close();
      }
      const finished = (await sessionEvents(fleet.redis, fleet.config.queueName, sessionId)).find((event) => event.type === 'input_finished' && event.data.inputSeq === seq);
      expect(finished?.data).toMatchObject({ status: 'completed', finalText: deadResult.finalText });
    }
  });

  it('an input trimmed off the stream, or a stream emptied of its entries: the repair cannot tell whether its finish was written, and publishes nothing', async () => {
    const sessionId = 'trimmed-past';
    const key = eventStreamKey(fleet.config.queueName, sessionId);
    await runToEnd(sessionId, ['one']);
    await unpublish(sessionId, 1);
    // Trimmed as MAXLEN would after later events: the oldest entry left is a later one. (Only the
    // event: an input accepted and left open would strand the session, and a later test's worker
    // would run it.)
    await publish(sessionId, 2, { type: 'input_accepted', kind: 'send', mode: 'queue', inputId: 'later' });
    const [[newest]] = (await fleet.redis.xrevrange(key, '+', '-', 'COUNT', 1)) as [[string, string[]]];
    await fleet.redis.xtrim(key, 'MINID', newest);
    expect((await sessionEvents(fleet.redis, fleet.config.queueName, sessionId)).map((event) => [event.type, event.data.inputSeq, event.data.seq])).toEqual([['input_accepted', 2, expect.any(Number)]]);
    const publisher = new RedisEventPublisher(fleet.redis, { queueName: fleet.config.queueName });
    try {
      expect(await republishLostFinishes(repairContext(publisher), sessionId, LEASE_TOKEN, 2)).toBe(0);
      // Emptied (its seq counter still says events were numbered): no different.
      await fleet.redis.xtrim(key, 'MAXLEN', 0);
      expect(await fleet.redis.xlen(key)).toBe(0);
      expect(await republishLostFinishes(repairContext(publisher), sessionId, LEASE_TOKEN, 2)).toBe(0);
      expect(await finishedSeqs(sessionId)).toEqual([]);
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
    // The check reads the finished inputs (listInputs of terminal ones) and the stream; the second drain did neither.
    expect(repairReads(store, sessionId)).toEqual([]);
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

  it("a released session whose last finish is still owed (its drain job gave up while Redis refused it): the sweeper starts the drain that publishes it, with no new input", async () => {
    const sessionId = 'finish-owed-released';
    await runToEnd(sessionId, ['the last one']);
    // As after a drain whose publish Redis refused: released, the flag set, the event not on the stream,
    // and the drain job's attempts used up (nothing else will come for this session).
    await unpublish(sessionId, 1);
    await fleet.pool.query(`UPDATE sessions SET finishes_owed = true, updated_at = now() - interval '1 hour' WHERE id = $1`, [sessionId]);
    expect(await finishedSeqs(sessionId)).toEqual([]);
    const worker = await fleet.startWorker({ settings: { sweepEveryMs: 300, sweepGraceMs: 200 } });
    try {
      await fleet.waitFor('the owed input_finished', async () => ((await finishedSeqs(sessionId)).length >= 1 ? true : undefined));
      expect(await finishedSeqs(sessionId)).toEqual([1]);
      await fleet.waitFor('the flag cleared', async () =>
        (await fleet.pool.query(`SELECT finishes_owed FROM sessions WHERE id = $1`, [sessionId])).rows[0]?.finishes_owed === false ? true : undefined,
      );
    } finally {
      await worker.close();
    }
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

  it('a holder that died before its own repair, with the next input claimed: the holder that resumes that input still publishes the finish owed before it', async () => {
    const sessionId = 'repair-before-resumed';
    await diedAfterTerminalCommit(sessionId);
    await accept(sessionId, 'two');
    // The next holder takes the lease with a finish owed (the lease claims nothing then), claims
    // input 2 and dies before its repair — as a worker of an earlier version, which claimed with the
    // lease, could; a current one claims only once its repair succeeded.
    const next = await fleet.store.acquireLeaseAndClaim({ sessionId, owner: 'dead-before-repair', ttlMs: 60_000 });
    expect(next).toMatchObject({ acquired: true, finishesOwed: true, claimed: undefined });
    if (!next.acquired) throw new Error('expected the lease');
    expect(await fleet.store.claimNextInput({ sessionId, leaseToken: next.token })).toMatchObject({ input: { seq: 2 }, resumed: false });
    await lapse(sessionId);
    // The sweeper finds the unreleased lease; the drain it starts resumes input 2.
    const worker = await fleet.startWorker({ settings: { sweepEveryMs: 300, sweepGraceMs: 200 } });
    try {
      expect(await settled(sessionId, 2)).toEqual([1, 2]);
    } finally {
      await worker.close();
    }
    const events = await sessionEvents(fleet.redis, fleet.config.queueName, sessionId);
    const finished1 = events.findIndex((event) => event.type === 'input_finished' && event.data.inputSeq === 1);
    expect(finished1).toBeLessThan(events.findIndex((event) => event.type === 'input_resumed' && event.data.inputSeq === 2));
    expect(events[finished1]!.data).toMatchObject({ status: 'completed', finalText: 'done by a holder that died' });
  });

  it('a repair that failed runs no input: the drain retries with the finish still owed, so a later input cannot hide it', async () => {
    const sessionId = 'repair-failed';
    await diedAfterTerminalCommit(sessionId);
    // The first store read a drain makes after taking the lease with a finish owed — the repair's — fails once.
    let armed = false;
    let failed = false;
    const failFirstRepairRead = (store: SessionStore): SessionStore =>
      new Proxy(store, {
        get: (target, property, receiver) => {
          const value: unknown = Reflect.get(target, property, receiver);
          if (typeof value !== 'function') return value;
          return async (...args: unknown[]) => {
            if (property === 'acquireLeaseAndClaim') {
              const lease = (await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args)) as { acquired: boolean; finishesOwed?: boolean };
              if (!failed && lease.acquired && lease.finishesOwed === true && (args[0] as { sessionId: string }).sessionId === sessionId) armed = true;
              return lease;
            }
            if (armed && ['getSession', 'getInput', 'listInputs'].includes(String(property)) && args[0] === sessionId) {
              armed = false;
              failed = true;
              throw new Error('Connection terminated unexpectedly');
            }
            return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          };
        },
      });
    const worker = await fleet.startWorker({ wrapStore: failFirstRepairRead, settings: { sweepEveryMs: 3_600_000 } });
    try {
      await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'two' } });
      await fleet.waitForSessionIdle(sessionId, 2);
      await fleet.waitFor("input 2's input_finished", async () => ((await finishedSeqs(sessionId)).includes(2) ? true : undefined));
      // The next drain's repair looks only at the input that ended last: input 2.
      await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'three' } });
      expect(await settled(sessionId, 3)).toEqual([1, 2, 3]);
    } finally {
      await worker.close();
    }
    expect(failed).toBe(true);
    const events = await sessionEvents(fleet.redis, fleet.config.queueName, sessionId);
    // Input 2 started only after the repair published input 1's finish.
    expect(events.findIndex((event) => event.type === 'input_finished' && event.data.inputSeq === 1)).toBeLessThan(
      events.findIndex((event) => event.data.inputSeq === 2 && event.type !== 'input_accepted'),
    );
  });

  it('repairs that fail again and again count no attempt of the input waiting behind them: it runs, once, when one succeeds — not given up as a poison input', async () => {
    const sessionId = 'repair-fails-attempts';
    await diedAfterTerminalCommit(sessionId);
    const store = new InstrumentedStore();
    // The repair's read of the finished inputs fails in the first two drains (Postgres or Redis trouble alike: the drain throws).
    const isRepairRead = (args: unknown[]) => args[0] === sessionId && [(args[1] as { status?: unknown } | undefined)?.status].flat().includes('cancelled');
    for (let i = 0; i < 2; i += 1) store.failNext('listInputs', () => new Error('Connection terminated unexpectedly'), { when: isRepairRead });
    // One start allowed: with a claim counted per failed repair, input 2 would be given up at the third drain.
    const worker = await fleet.startWorker({ wrapStore: store.wrap, settings: { maxInputAttempts: 1, sweepEveryMs: 3_600_000 } });
    try {
      await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'two' } });
      expect(await settled(sessionId, 2)).toEqual([1, 2]);
    } finally {
      await worker.close();
    }
    expect(repairReads(store, sessionId).length).toBeGreaterThanOrEqual(3);
    expect(await fleet.store.getInput(sessionId, 2)).toMatchObject({ status: 'done', attempts: 1, errorCode: null, result: { status: 'completed', finalText: 'Echo: two' } });
    const events = await sessionEvents(fleet.redis, fleet.config.queueName, sessionId);
    expect(events.filter((event) => event.type === 'input_started' && event.data.inputSeq === 2)).toHaveLength(1);
    expect(events.filter((event) => event.type === 'input_resumed')).toEqual([]);
    expect(events.findIndex((event) => event.type === 'input_finished' && event.data.inputSeq === 1)).toBeLessThan(
      events.findIndex((event) => event.type === 'input_started' && event.data.inputSeq === 2),
    );
  });

  it('a claim that fails after the repair: the drain releases the lease at once (the finish it published no longer owed), with no attempt counted', async () => {
    const sessionId = 'claim-after-repair-fails';
    await diedAfterTerminalCommit(sessionId);
    const store = new InstrumentedStore();
    const forSession = (args: unknown[]) => (args[0] as { sessionId: string }).sessionId === sessionId;
    store.failNext('claimNextInput', () => new Error('Connection terminated unexpectedly'), { when: forSession });
    // The failed drain's release, once it ran: the job's retry waits until it is let go.
    const released = store.hold('releaseLease', { when: forSession, after: true });
    const worker = await fleet.startWorker({ wrapStore: store.wrap, settings: { sweepEveryMs: 3_600_000 } });
    try {
      await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'two' } });
      const [release] = (await released.entered) as [{ token: number; finishesPublished?: boolean }];
      expect((store.calls.get('claimNextInput') ?? []).filter(forSession)).toHaveLength(1);
      expect(release.finishesPublished).toBe(true);
      const row = (await fleet.pool.query(`SELECT lease_token, lease_expires_at, finishes_owed FROM sessions WHERE id = $1`, [sessionId])).rows[0] as Record<string, unknown>;
      expect(row).toMatchObject({ lease_token: release.token, lease_expires_at: null, finishes_owed: false });
      expect(await fleet.store.getInput(sessionId, 2)).toMatchObject({ status: 'pending', attempts: 0 });
      expect(await finishedSeqs(sessionId)).toEqual([1]);
      released.release();
      expect(await settled(sessionId, 2)).toEqual([1, 2]);
    } finally {
      released.release();
      await worker.close();
    }
    expect(await fleet.store.getInput(sessionId, 2)).toMatchObject({ status: 'done', attempts: 1 });
  });

  it('an input accepted while a drain that claimed nothing repairs: the repair still publishes the finish owed before it', async () => {
    const sessionId = 'repair-racing-accept';
    await diedAfterTerminalCommit(sessionId);
    const store = new InstrumentedStore();
    // The repair of the drain the sweeper starts (nothing to claim) reads the session: input 2 is accepted just before.
    const reading = store.hold('getSession', { when: (args) => args[0] === sessionId });
    const worker = await fleet.startWorker({ wrapStore: store.wrap, settings: { sweepEveryMs: 300, sweepGraceMs: 200 } });
    try {
      await reading.entered;
      await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'two' } });
      reading.release();
      expect(await settled(sessionId, 2)).toEqual([1, 2]);
    } finally {
      reading.release();
      await worker.close();
    }
  });

  it('a steer input delivered into an earlier input past a queued one: the repair publishes its finish with its host\'s', async () => {
    const sessionId = 'repair-steered-past-queued';
    await diedAfterTerminalCommit(sessionId, async (token) => {
      await accept(sessionId, 'two (queued)');
      await accept(sessionId, 'three (steer)', 'steer');
      // Input 3 joins input 1 at a round boundary; input 2, queued, waits for its turn.
      await fleet.store.commitStep({
        sessionId,
        leaseToken: token,
        messages: [{ inputSeq: 1, round: 0, message: { role: 'user', content: 'three (steer)' } }],
        steer: { seqs: [3], intoInputSeq: 1 },
      });
    });
    expect((await fleet.store.listInputs(sessionId)).map((input) => [input.seq, input.status, input.steeredInto])).toEqual([
      [1, 'done', null],
      [2, 'pending', null],
      [3, 'done', 1],
    ]);
    const worker = await fleet.startWorker({ settings: { sweepEveryMs: 300, sweepGraceMs: 200 } });
    try {
      expect(await settled(sessionId, 3)).toEqual([1, 3, 2]);
    } finally {
      await worker.close();
    }
    const finished = (await sessionEvents(fleet.redis, fleet.config.queueName, sessionId)).filter((event) => event.type === 'input_finished');
    expect(finished.map((event) => [event.data.inputSeq, event.data.finalText, event.data.steeredInto ?? null])).toEqual([
      [1, 'done by a holder that died', null],
      [3, 'done by a holder that died', 1],
      [2, 'Echo: two (queued)', null],
    ]);
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
