import { duplicateRedis } from '../../../src/fleet/redis-connection.js';
import { Worker as BullWorker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedLlm } from '../../../src/llm/scripted-llm.js';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { drainDedupId, JOB } from '../../../src/fleet/fleet-keys.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { InstrumentedStore, queueEvents } from './fixtures/fleet-helpers.js';

/**
 * The dispatch races of docs/invariants.md that a single process can stage
 * exactly: R1 (an input arriving while the drain finishes), R5 (concurrent producers), R6 (duplicate
 * input ids), R7 (a second drain while the lease is held), R8 (a drain that released its lease and died
 * before finishing its job) and R10 (a failure never reorders inputs). Each test holds the worker at
 * the exact point of its race with an instrumented store, and disables the sweeper so the handling
 * under test is the only thing that can rescue the input.
 */

/** The sweeper is the backstop of every race: out of the way, unless a test is about it. */
const NO_SWEEPER = { sweepEveryMs: 3_600_000 } as const;

const forSession = (sessionId: string) => (args: unknown[]) => (args[0] as { sessionId?: string }).sessionId === sessionId;

describe('dispatch races (R1, R5–R8, R10)', () => {
  let fleet: FleetFixture;

  beforeAll(async () => {
    fleet = await FleetFixture.create('races');
  });

  afterAll(async () => {
    await fleet?.close();
  });

  async function openDrainJobs(sessionId: string) {
    const jobs = await fleet.queue.getJobs(['waiting', 'active', 'delayed', 'prioritized']);
    return jobs.filter((job) => job.name === JOB.drain && (job.data as { sessionId?: string }).sessionId === sessionId);
  }

  async function send(sessionId: string, text: string, extra: { inputId?: string } = {}) {
    return acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: text }, ...extra });
  }

  it('R1: an input accepted and kicked while the drain is finishing, after its last empty claim, is run by the drain BullMQ re-enqueues (keepLastIfActive)', async () => {
    const store = new InstrumentedStore();
    const worker = await fleet.startWorker({ wrapStore: store.wrap, settings: NO_SWEEPER });
    try {
      const sessionId = 'r1-keep-last';
      // The drain's last act before its job completes: releasing the lease after finding the inbox empty.
      const finishing = store.hold('releaseLease', { when: forSession(sessionId) });
      await send(sessionId, 'first');
      await finishing.entered;
      expect(await fleet.store.getInput(sessionId, 1)).toMatchObject({ status: 'done' });
      const [active] = await openDrainJobs(sessionId);
      expect(await active!.getState()).toBe('active');
      // The race: the producer commits and kicks now; the drain already saw an empty inbox.
      await send(sessionId, 'second');
      finishing.release();
      const inputs = await fleet.waitForSessionIdle(sessionId, 2);
      expect(inputs.map((input) => [input.seq, input.status, input.result?.finalText])).toEqual([
        [1, 'done', 'Echo: first'],
        [2, 'done', 'Echo: second'],
      ]);
      // A second drain job ran the second input; nothing else could have (no sweeper).
      expect(store.calls.get('acquireLeaseAndClaim')!.filter((args) => (args[0] as { sessionId: string }).sessionId === sessionId)).toHaveLength(2);
    } finally {
      await worker.close();
    }
  });

  it('R1 without keepLastIfActive (simple-mode dedup): the kick made while the drain finishes is dropped and the input is stranded until the sweeper', async () => {
    const store = new InstrumentedStore();
    const worker = await fleet.startWorker({ wrapStore: store.wrap, settings: { ...NO_SWEEPER, sweepGraceMs: 0 } });
    try {
      const sessionId = 'r1-simple-mode';
      const simpleKick = () => fleet.queue.add(JOB.drain, { sessionId }, { deduplication: { id: drainDedupId(sessionId) }, removeOnComplete: true });
      const finishing = store.hold('releaseLease', { when: forSession(sessionId) });
      const maxBytes = fleet.config.worker.maxInputBytes;
      await fleet.store.acceptInput({ sessionId, kind: 'send', payload: { input: 'first' }, maxBytes });
      await simpleKick();
      await finishing.entered;
      await fleet.store.acceptInput({ sessionId, kind: 'send', payload: { input: 'second' }, maxBytes });
      await simpleKick();
      finishing.release();
      // The first drain job finishes; the kick was swallowed by its deduplication id, so no job is left.
      await fleet.waitFor('the first drain to finish', async () => ((await fleet.queue.getDeduplicationJobId(drainDedupId(sessionId))) === null ? true : undefined));
      expect(await openDrainJobs(sessionId)).toEqual([]);
      const stranded = await fleet.store.getInput(sessionId, 2);
      expect(stranded).toMatchObject({ status: 'pending', attempts: 0 });
      expect((await queueEvents(fleet.redis, fleet.config.queueName)).some((entry) => entry.event === 'deduplicated' && entry.fields.deduplicationId === drainDedupId(sessionId))).toBe(true);
      // Only the sweeper finds it: one sweep, and the input runs.
      await fleet.queue.add(JOB.sweep, {}, { removeOnComplete: true });
      const inputs = await fleet.waitForSessionIdle(sessionId, 2);
      expect(inputs.map((input) => [input.seq, input.status, input.result?.finalText])).toEqual([
        [1, 'done', 'Echo: first'],
        [2, 'done', 'Echo: second'],
      ]);
    } finally {
      await worker.close();
    }
  });

  it('R5: concurrent producers on one session get gapless seqs in commit order, and the worker runs them in that order', async () => {
    const worker = await fleet.startWorker({ settings: NO_SWEEPER });
    try {
      const sessionId = 'r5-concurrent';
      const texts = Array.from({ length: 40 }, (_, i) => `message ${i}`);
      const accepted = await Promise.all(texts.map((text) => send(sessionId, text)));
      expect(accepted.map((entry) => entry.seq).sort((a, b) => a - b)).toEqual(texts.map((_, i) => i + 1));
      const inputs = await fleet.waitForSessionIdle(sessionId, texts.length, 60_000);
      expect(inputs.every((input) => input.status === 'done')).toBe(true);
      const bySeq = inputs.map((input) => input.payload.input as string);
      // Every text once, at the seq its accept returned.
      expect([...bySeq].sort()).toEqual([...texts].sort());
      for (const entry of accepted) expect(inputs[entry.seq - 1]!.inputId).toBe(entry.inputId);
      // Commit order is acceptance time order, and the worker ran them in seq order.
      for (let i = 1; i < inputs.length; i += 1) {
        expect(inputs[i]!.acceptedAt.getTime()).toBeGreaterThanOrEqual(inputs[i - 1]!.acceptedAt.getTime());
        expect(inputs[i]!.startedAt!.getTime()).toBeGreaterThanOrEqual(inputs[i - 1]!.finishedAt!.getTime());
      }
      const transcript = await fleet.transcript(sessionId);
      expect(transcript).toEqual(bySeq.flatMap((text) => [`user: ${text}`, `assistant: Echo: ${text}`]));
    } finally {
      await worker.close();
    }
  });

  it('R6: an input id accepted several times (concurrently and again later) gets one seq and runs once', async () => {
    const llm = new ScriptedLlm([], { whenExhausted: 'echo' });
    const worker = await fleet.startWorker({ llm, settings: NO_SWEEPER });
    try {
      const sessionId = 'r6-duplicate';
      const first = await Promise.all(Array.from({ length: 5 }, () => send(sessionId, 'only once', { inputId: 'client-retry-1' })));
      expect(new Set(first.map((entry) => entry.seq))).toEqual(new Set([1]));
      expect(first.filter((entry) => !entry.duplicate)).toHaveLength(1);
      await fleet.waitForSessionIdle(sessionId, 1);
      const again = await send(sessionId, 'only once', { inputId: 'client-retry-1' });
      expect(again).toMatchObject({ seq: 1, duplicate: true });
      await send(sessionId, 'next');
      const inputs = await fleet.waitForSessionIdle(sessionId, 2);
      expect(inputs.map((input) => [input.seq, input.inputId, input.status, input.attempts])).toEqual([
        [1, 'client-retry-1', 'done', 1],
        [2, expect.any(String), 'done', 1],
      ]);
      expect(await fleet.transcript(sessionId)).toEqual(['user: only once', 'assistant: Echo: only once', 'user: next', 'assistant: Echo: next']);
      expect(llm.requests).toHaveLength(2);
    } finally {
      await worker.close();
    }
  });

  it('R7: a drain that finds the lease held is delayed, never dropped, and runs the input once the lease is released — with no new kick and no sweeper', async () => {
    const worker = await fleet.startWorker({ settings: NO_SWEEPER });
    try {
      const sessionId = 'r7-lease-held';
      await fleet.store.createSession({ id: sessionId });
      const held = await fleet.store.acquireLease({ sessionId, owner: 'test-holder', ttlMs: 600_000 });
      if (!held.acquired) throw new Error('lease not acquired');
      await send(sessionId, 'waits for the lease');
      const delayed = await fleet.waitFor('the drain job to be delayed', async () => {
        const [job] = await openDrainJobs(sessionId);
        return job !== undefined && (await job.getState()) === 'delayed' ? job : undefined;
      });
      expect(await fleet.store.getInput(sessionId, 1)).toMatchObject({ status: 'pending', attempts: 0 });
      // It stays delayed while the holder keeps the lease: checked again, delayed again, never completed.
      const recheck = await fleet.waitFor('a second check of the held lease', async () => {
        const job = await fleet.queue.getJob(delayed.id!);
        return job !== undefined && job.attemptsStarted >= 2 && (await job.getState()) === 'delayed' ? job : undefined;
      });
      expect(recheck.id).toBe(delayed.id);
      expect(await fleet.store.getInput(sessionId, 1)).toMatchObject({ status: 'pending' });
      await fleet.store.releaseLease({ sessionId, token: held.token });
      const [input] = await fleet.waitForSessionIdle(sessionId, 1);
      expect(input).toMatchObject({ status: 'done', attempts: 1, result: { finalText: 'Echo: waits for the lease' } });
      expect((await fleet.store.getSession(sessionId))!.lease.token).toBeGreaterThan(held.token);
    } finally {
      await worker.close();
    }
  });

  it('R8: a drain that released the lease and died before finishing its job is redelivered as stalled, harmlessly', async () => {
    const store = new InstrumentedStore();
    const worker = await fleet.startWorker({ wrapStore: store.wrap, settings: NO_SWEEPER });
    const checkerConnection = duplicateRedis(fleet.redis, { maxRetriesPerRequest: null });
    const checker = new BullWorker(fleet.config.queueName, undefined, { connection: checkerConnection, autorun: false, maxStalledCount: 5 });
    const sessionId = 'r8-died-after-release';
    // The "dead" drain: it released the lease (after: the release ran), and never returns.
    const dead = store.hold('releaseLease', { when: forSession(sessionId), after: true });
    try {
      await send(sessionId, 'before the crash');
      await dead.entered;
      const [job] = await openDrainJobs(sessionId);
      expect(await job!.getState()).toBe('active');
      expect((await fleet.store.getSession(sessionId))!.lease.expiresAt).toBeNull();
      // An input arrives meanwhile: its kick is kept for when the dead job finishes — which it never will.
      await send(sessionId, 'after the crash');
      // The dead worker's BullMQ lock lapses (as it does when a process dies) and a stalled check runs.
      await fleet.redis.del(`bull:${fleet.config.queueName}:${job!.id}:lock`);
      for (let pass = 0; pass < 2; pass += 1) {
        await fleet.redis.del(`bull:${fleet.config.queueName}:stalled-check`);
        // What every worker's stalled checker does each `stalledInterval` (private in BullMQ's typings).
        await (checker as unknown as { moveStalledJobsToWait(): Promise<void> }).moveStalledJobsToWait();
      }
      const inputs = await fleet.waitForSessionIdle(sessionId, 2);
      expect(inputs.map((input) => [input.seq, input.status, input.attempts, input.result?.finalText])).toEqual([
        [1, 'done', 1, 'Echo: before the crash'],
        [2, 'done', 1, 'Echo: after the crash'],
      ]);
      expect((await queueEvents(fleet.redis, fleet.config.queueName)).some((entry) => entry.event === 'stalled' && entry.jobId === job!.id)).toBe(true);
      expect(await fleet.transcript(sessionId)).toEqual(['user: before the crash', 'assistant: Echo: before the crash', 'user: after the crash', 'assistant: Echo: after the crash']);
    } finally {
      dead.release();
      await worker.close();
      await checker.close();
      await checkerConnection.quit();
    }
    // The dead drain's late return changed nothing.
    expect(await fleet.transcript(sessionId)).toHaveLength(4);
  });

  it('R10: a failed input does not reorder the session, and a drain job that fails is retried from the lowest open seq', async () => {
    const store = new InstrumentedStore();
    const llm = new ScriptedLlm([{ text: 'one' }, { error: Object.assign(new Error('bad request'), { status: 400 }) }], { whenExhausted: 'echo' });
    const worker = await fleet.startWorker({ llm, wrapStore: store.wrap, settings: NO_SWEEPER });
    try {
      const sessionId = 'r10-no-reorder';
      // The drain job's first attempt fails on infrastructure right after it claims input 1 with its lease.
      store.failNext('acquireLeaseAndClaim', () => new Error('connection reset (injected)'), { when: forSession(sessionId), after: true });
      for (const text of ['first', 'second', 'third', 'fourth']) await send(sessionId, text);
      const inputs = await fleet.waitForSessionIdle(sessionId, 4, 60_000);
      expect(inputs.map((input) => input.status)).toEqual(['done', 'done', 'done', 'done']);
      expect(inputs.map((input) => input.result?.status)).toEqual(['completed', 'degraded', 'completed', 'completed']);
      // The claim that failed had marked input 1 running (its lease then lapsed: the token never reached
      // the drain, so it could not be released): the retry resumed it, still first.
      expect(inputs[0]!.attempts).toBe(2);
      for (let i = 1; i < inputs.length; i += 1) expect(inputs[i]!.startedAt!.getTime()).toBeGreaterThanOrEqual(inputs[i - 1]!.finishedAt!.getTime());
      const users = (await fleet.transcript(sessionId)).filter((line) => line.startsWith('user: '));
      expect(users).toEqual(['user: first', 'user: second', 'user: third', 'user: fourth']);
      // Two drains took the lease: the failed attempt and BullMQ's retry of the same job.
      expect(store.calls.get('acquireLeaseAndClaim')!.filter((args) => (args[0] as { sessionId: string }).sessionId === sessionId).length).toBeGreaterThanOrEqual(2);
    } finally {
      await worker.close();
    }
  });
});
