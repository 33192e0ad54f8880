import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HookRegistry } from '../../../src/core/hooks/index.js';
import { ScriptedLlm } from '../../../src/llm/scripted-llm.js';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { eventStreamKey, JOB, timerJobId } from '../../../src/fleet/fleet-keys.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { getTimer, listTimers } from '../../../src/store/timers/timer-queries.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { runCliInProcess } from '../../support/run-cli-process.js';

/**
 * Durable timers (docs/fleet.md) on a real fleet: a timer is a row in Postgres and a delayed BullMQ
 * job per firing; each firing becomes a `timer` input of the session, recorded on the row, announced
 * with `timer_fired`; an alarm lost with Redis is set again by the sweeper.
 */
describe('durable timers', () => {
  let fleet: FleetFixture;
  let queue: SessionQueue;

  beforeAll(async () => {
    fleet = await FleetFixture.create('timers');
    queue = SessionQueue.fromEnv(fleet.env);
  });

  afterEach(async () => {
    await Promise.allSettled(fleet.workers.splice(0).map((worker) => worker.close({ graceMs: 2_000 })));
  });

  afterAll(async () => {
    await queue?.close();
    await fleet?.close();
  });

  /** The `timer_fired` entries of a session's stream, as their data. */
  async function firedEvents(sessionId: string): Promise<Array<Record<string, unknown>>> {
    const entries = await fleet.redis.xrange(eventStreamKey(fleet.config.queueName, sessionId), '-', '+');
    return entries
      .filter(([, fields]) => fields[fields.indexOf('type') + 1] === 'timer_fired')
      .map(([, fields]) => JSON.parse(fields[fields.indexOf('data') + 1]!) as Record<string, unknown>);
  }

  it("a one-shot timer fires once, as a timer input the agent reads as its note; scheduling its id again changes nothing", async () => {
    await fleet.startWorker();
    const scheduled = await queue.add('timer', { sessionId: 'tm-once', delayMs: 0, note: 'check the oven', timerId: 'oven' });
    expect(scheduled).toMatchObject({ sessionId: 'tm-once', timerId: 'oven', status: 'armed', fireCount: 0, everyMs: null, createdBy: 'host', duplicate: false });
    const [input] = await fleet.waitForSessionFinished('tm-once', 1);
    expect(input).toMatchObject({ seq: 1, kind: 'timer', inputId: 'timer:oven:1', status: 'done', payload: { timerId: 'oven', note: 'check the oven', fireCount: 1 } });
    expect((await fleet.transcript('tm-once'))[0]).toBe('user: <timer id="oven" firing="1">\ncheck the oven\n</timer>');
    await fleet.waitFor('the firing recorded', async () => ((await getTimer(fleet.pool, 'tm-once', 'oven'))?.status === 'fired' ? true : undefined));
    expect(await queue.timers.get('tm-once', 'oven')).toMatchObject({ status: 'fired', fireCount: 1, lastFiredAt: expect.any(Date) });
    expect(await fleet.waitFor('timer_fired', async () => ((await firedEvents('tm-once')).length > 0 ? firedEvents('tm-once') : undefined))).toEqual([
      expect.objectContaining({ timerId: 'oven', fireCount: 1, outcome: 'delivered', inputSeq: 1 }),
    ]);
    // The same id again: the stored timer, not a second one, and no alarm for a fired timer.
    expect(await queue.timers.schedule('tm-once', { delayMs: 0, note: 'check the oven', timerId: 'oven' })).toMatchObject({ status: 'fired', fireCount: 1, duplicate: true });
    expect(await fleet.queue.getJob(timerJobId('tm-once', 'oven', 1))).toBeUndefined();
    expect(await queue.timers.list('tm-once')).toEqual([]);
    expect((await queue.timers.list('tm-once', { all: true })).map((timer) => timer.timerId)).toEqual(['oven']);
  });

  it('a recurring timer fires again every period until it is cancelled; an alarm set before the cancel delivers nothing', async () => {
    await fleet.startWorker();
    const sessionId = 'tm-every';
    await queue.timers.schedule(sessionId, { delayMs: 0, everyMs: 1000, note: 'poll the build', timerId: 'poll' });
    await fleet.waitForSessionIdle(sessionId, 2);
    expect(await queue.timers.cancel(sessionId, 'poll')).toBe(true);
    expect(await queue.timers.cancel(sessionId, 'poll')).toBe(false);
    const cancelled = await getTimer(fleet.pool, sessionId, 'poll');
    expect(cancelled).toMatchObject({ status: 'cancelled', everyMs: 1000 });
    // The alarm of the next firing was set before the cancel; once it has run, nothing more was delivered.
    const nextAlarm = timerJobId(sessionId, 'poll', cancelled!.fireCount);
    await fleet.waitFor('the last alarm to run', async () => ((await fleet.queue.getJob(nextAlarm)) === undefined ? true : undefined), 20_000);
    const inputs = await fleet.store.listInputs(sessionId, { limit: 100 });
    // One firing more than the row counts only if the cancel came between that firing's accept and
    // its record: a firing already delivered stays delivered.
    const delivered = inputs.length;
    expect([cancelled!.fireCount, cancelled!.fireCount + 1]).toContain(delivered);
    expect(inputs.map((input) => input.inputId)).toEqual(Array.from({ length: delivered }, (_, i) => `timer:poll:${i + 1}`));
    expect(inputs.every((input) => input.kind === 'timer')).toBe(true);
  });

  it('the sweeper sets again the alarm of an overdue armed timer that Redis lost', async () => {
    const sessionId = 'tm-lost';
    await queue.timers.schedule(sessionId, { delayMs: 0, note: 'lost alarm', timerId: 'lost' });
    // Redis lost the alarm (a flush, a restart without persistence) before any worker ran it.
    expect(await fleet.queue.remove(timerJobId(sessionId, 'lost', 0))).toBe(1);
    await fleet.startWorker({ settings: { sweepEveryMs: 300, sweepGraceMs: 200 } });
    const [input] = await fleet.waitForSessionIdle(sessionId, 1);
    expect(input).toMatchObject({ kind: 'timer', inputId: 'timer:lost:1', status: 'done' });
    expect(await getTimer(fleet.pool, sessionId, 'lost')).toMatchObject({ status: 'fired', fireCount: 1 });
  });

  it('loopfleet timer, timers and cancel-timer schedule, list and cancel', async () => {
    const cli = (...argv: string[]) => runCliInProcess(argv, fleet.env);
    const scheduled = await cli('timer', 'tm-cli', 'stand-up in an hour', '--in', '3600000', '--every', '86400000', '--id', 'standup');
    expect(scheduled).toMatchObject({ code: 0, err: '' });
    expect(scheduled.out).toMatch(/^scheduled tm-cli timer standup due \d{4}-\d{2}-\d{2}T[\d:.]+Z\n$/);
    expect((await cli('timer', 'tm-cli', 'stand-up in an hour', '--in', '3600000', '--id', 'standup')).out).toMatch(/ \(duplicate\)\n$/);
    const month = new Date(Date.now() + 30 * 86_400_000);
    month.setUTCHours(0, 0, 0, 0);
    expect(await cli('timer', 'tm-cli', 'new year', '--at', month.toISOString(), '--id', 'ny')).toMatchObject({ code: 0, out: `scheduled tm-cli timer ny due ${month.toISOString()}\n` });
    const listed = await cli('timers', 'tm-cli');
    expect(listed.code).toBe(0);
    expect(listed.out.trim().split('\n').map((line) => line.split('  ').slice(0, 2).concat(line.split('  ').slice(3)))).toEqual([
      ['standup', 'armed', 'every 86400000 ms', 'fired 0', '"stand-up in an hour"'],
      ['ny', 'armed', 'once', 'fired 0', '"new year"'],
    ]);
    const json = (await cli('timers', 'tm-cli', '--json')).out.trim().split('\n').map((line) => JSON.parse(line) as { timerId: string; everyMs: number | null });
    expect(json.map((timer) => [timer.timerId, timer.everyMs])).toEqual([['standup', 86_400_000], ['ny', null]]);
    expect(await cli('cancel-timer', 'tm-cli', 'standup')).toMatchObject({ code: 0, out: 'cancelled timer standup of tm-cli\n' });
    expect(await cli('cancel-timer', 'tm-cli', 'standup')).toMatchObject({ code: 3, err: 'loopfleet cancel-timer: no armed timer standup on session tm-cli\n' });
    expect((await cli('timers', 'tm-cli')).out).toMatch(/^ny {2}armed/);
    expect((await cli('timers', 'tm-cli', '--all')).out.split('\n').filter(Boolean).map((line) => line.split('  ').slice(0, 2))).toEqual(
      expect.arrayContaining([['standup', 'cancelled'], ['ny', 'armed']]),
    );
    await queue.timers.cancel('tm-cli', 'ny');
  });

  it('a worker that died between delivering a firing and recording it: the alarm set again delivers nothing twice and records the firing', async () => {
    const sessionId = 'tm-crash';
    await queue.timers.schedule(sessionId, { delayMs: 0, note: 'once only', timerId: 'crash' });
    // What the dead worker did: the firing's input accepted, the row not yet recorded, the alarm gone.
    await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'timer', payload: { timerId: 'crash', note: 'once only', fireCount: 1 }, inputId: 'timer:crash:1' });
    await fleet.queue.remove(timerJobId(sessionId, 'crash', 0));
    await fleet.startWorker({ settings: { sweepEveryMs: 300, sweepGraceMs: 200 } });
    await fleet.waitFor('the firing recorded', async () => ((await getTimer(fleet.pool, sessionId, 'crash'))?.status === 'fired' ? true : undefined));
    const inputs = await fleet.waitForSessionIdle(sessionId, 1);
    expect(inputs.map((input) => input.inputId)).toEqual(['timer:crash:1']);
    expect(await getTimer(fleet.pool, sessionId, 'crash')).toMatchObject({ fireCount: 1 });
    expect(await fleet.waitFor('timer_fired', async () => ((await firedEvents(sessionId)).length > 0 ? firedEvents(sessionId) : undefined))).toEqual([
      expect.objectContaining({ timerId: 'crash', fireCount: 1, outcome: 'delivered', inputSeq: 1 }),
    ]);
  });

  it('a firing the inbox refuses (a note over the input size limit) cancels the timer and is announced as an error', async () => {
    const sessionId = 'tm-too-large';
    await fleet.startWorker({ settings: { maxInputBytes: 200 } });
    await queue.timers.schedule(sessionId, { delayMs: 0, everyMs: 1000, note: 'n'.repeat(500), timerId: 'big' });
    await fleet.waitFor('the timer cancelled', async () => ((await getTimer(fleet.pool, sessionId, 'big'))?.status === 'cancelled' ? true : undefined));
    expect(await getTimer(fleet.pool, sessionId, 'big')).toMatchObject({ fireCount: 0 });
    expect(await fleet.store.listInputs(sessionId, { limit: 10 })).toEqual([]);
    expect(await fleet.waitFor('timer_fired', async () => ((await firedEvents(sessionId)).length > 0 ? firedEvents(sessionId) : undefined))).toEqual([
      expect.objectContaining({ timerId: 'big', fireCount: 1, outcome: 'error', inputSeq: null, error: expect.objectContaining({ code: 'input.too_large' }) }),
    ]);
  });

  it('a note the timer.fire hook rewrote past the input size limit is the hook\'s error: the timer stays armed and the retry delivers', async () => {
    const sessionId = 'tm-hook-too-large';
    let calls = 0;
    const hooks = new HookRegistry().register('timer.fire', (fire) => {
      if (fire.sessionId !== sessionId) return 'continue';
      calls += 1;
      if (calls === 1) fire.note = 'n'.repeat(500);
      return 'continue';
    });
    await fleet.startWorker({ hooks, settings: { maxInputBytes: 200 } });
    await queue.timers.schedule(sessionId, { delayMs: 0, note: 'short', timerId: 'grown' });
    const [input] = await fleet.waitForSessionFinished(sessionId, 1);
    expect(input).toMatchObject({ inputId: 'timer:grown:1', payload: { note: 'short' } });
    expect(await getTimer(fleet.pool, sessionId, 'grown')).toMatchObject({ status: 'fired', fireCount: 1 });
    expect(calls).toBe(2);
    expect(await fleet.waitFor('2 timer_fired', async () => ((await firedEvents(sessionId)).length >= 2 ? firedEvents(sessionId) : undefined))).toEqual([
      expect.objectContaining({ timerId: 'grown', fireCount: 1, outcome: 'error', error: expect.objectContaining({ code: 'internal', message: expect.stringContaining('input.too_large') }) }),
      expect.objectContaining({ timerId: 'grown', fireCount: 1, outcome: 'delivered', inputSeq: 1 }),
    ]);
  });

  it("an alarm that runs before the row's due time (set by a clock ahead) is moved to that time, delivering nothing yet", async () => {
    const sessionId = 'tm-early';
    const scheduled = await queue.timers.schedule(sessionId, { delayMs: 3_600_000, note: 'in an hour', timerId: 'later' });
    await fleet.startWorker();
    // An alarm for the same firing with no delay: what a producer whose clock runs an hour ahead would set.
    const early = await fleet.queue.add(JOB.timer, { sessionId, timerId: 'later', fireCount: 0 });
    await fleet.waitFor('the early alarm delayed', async () => ((await early.getState()) === 'delayed' ? true : undefined));
    const moved = await fleet.queue.getJob(early.id!);
    expect(moved!.timestamp + moved!.delay).toBeGreaterThanOrEqual(scheduled.dueAt.getTime() - 1000);
    expect(await getTimer(fleet.pool, sessionId, 'later')).toMatchObject({ status: 'armed', fireCount: 0 });
    expect(await fleet.store.listInputs(sessionId, { limit: 10 })).toEqual([]);
    await queue.timers.cancel(sessionId, 'later');
  });

  it('the timer.fire hook rewrites a firing\'s note, skips a firing, cancels a timer or postpones a firing; one that throws leaves the alarm to be retried', async () => {
    const calls: Array<{ timerId: string; fireCount: number; note: string; dueAt: Date; signal: AbortSignal }> = [];
    const hooks = new HookRegistry().register('timer.fire', (fire) => {
      calls.push({ timerId: fire.timerId, fireCount: fire.fireCount, note: fire.note, dueAt: fire.dueAt, signal: fire.signal });
      const seen = calls.filter((call) => call.timerId === fire.timerId && call.fireCount === fire.fireCount).length;
      switch (fire.timerId) {
        case 'rewrite':
          fire.note = `${fire.note} (it is ${fire.dueAt.getUTCFullYear()})`;
          return 'continue';
        case 'every-other':
          return fire.fireCount % 2 === 1 ? 'skip' : 'continue';
        case 'stop':
          return 'break';
        case 'later':
          if (seen === 1) fire.postponeMs = 1500;
          return 'continue';
        case 'flaky':
          if (seen === 1) throw new Error('the calendar service is down');
          // An invalid answer is a failed hook too.
          if (seen === 2) (fire as { postponeMs: unknown }).postponeMs = 'soon';
          // A note the inbox would refuse is the hook's fault: retried, never the timer cancelled.
          if (seen === 3) fire.note = 'a\u0000b';
          return 'continue';
        default:
          return 'continue';
      }
    });
    const worker = await fleet.startWorker({ hooks, healthServer: true });
    const schedule = (sessionId: string, timerId: string, options: { everyMs?: number } = {}) =>
      queue.timers.schedule(sessionId, Object.assign({ delayMs: 0, note: `note of ${timerId}`, timerId }, options));
    const fired = (sessionId: string, count: number) =>
      fleet.waitFor(`${String(count)} timer_fired of ${sessionId}`, async () => {
        const events = await firedEvents(sessionId);
        return events.length >= count ? events : undefined;
      });

    // Rewritten: the input carries the hook's note, the timer keeps its own.
    await schedule('tm-hook-rewrite', 'rewrite');
    const [rewritten] = await fleet.waitForSessionFinished('tm-hook-rewrite', 1);
    expect(rewritten?.payload).toMatchObject({ note: `note of rewrite (it is ${String(new Date().getUTCFullYear())})`, fireCount: 1 });
    expect(await getTimer(fleet.pool, 'tm-hook-rewrite', 'rewrite')).toMatchObject({ status: 'fired', note: 'note of rewrite' });

    // Skipped: firing 1 delivers nothing and the recurring timer is re-armed; firing 2 is delivered.
    await schedule('tm-hook-skip', 'every-other', { everyMs: 1000 });
    const [second] = await fleet.waitForSessionFinished('tm-hook-skip', 1);
    await queue.timers.cancel('tm-hook-skip', 'every-other');
    expect(second).toMatchObject({ seq: 1, inputId: 'timer:every-other:2' });
    expect((await fired('tm-hook-skip', 2)).slice(0, 2)).toEqual([
      expect.objectContaining({ timerId: 'every-other', fireCount: 1, outcome: 'skipped', inputSeq: null }),
      expect.objectContaining({ timerId: 'every-other', fireCount: 2, outcome: 'delivered', inputSeq: 1 }),
    ]);

    // Broken: the timer is cancelled before anything is delivered.
    await schedule('tm-hook-stop', 'stop', { everyMs: 1000 });
    expect(await fired('tm-hook-stop', 1)).toEqual([expect.objectContaining({ timerId: 'stop', fireCount: 1, outcome: 'cancelled', inputSeq: null })]);
    expect(await getTimer(fleet.pool, 'tm-hook-stop', 'stop')).toMatchObject({ status: 'cancelled', fireCount: 0 });
    expect(await fleet.store.getSession('tm-hook-stop')).not.toBeNull();
    expect(await fleet.store.listInputs('tm-hook-stop', { limit: 10 })).toEqual([]);

    // Postponed: the row is due later, the alarm waits for it, and the hook decides again then.
    const before = Date.now();
    await schedule('tm-hook-later', 'later');
    const [postponed] = await fired('tm-hook-later', 1);
    expect(postponed).toMatchObject({ timerId: 'later', fireCount: 1, outcome: 'postponed', inputSeq: null });
    expect(Date.parse(String(postponed!['dueAt']))).toBeGreaterThanOrEqual(before + 1500 - 1000);
    const [late] = await fleet.waitForSessionFinished('tm-hook-later', 1);
    expect(late).toMatchObject({ inputId: 'timer:later:1' });
    const laterCalls = calls.filter((call) => call.timerId === 'later');
    expect(laterCalls).toHaveLength(2);
    expect(laterCalls[1]!.dueAt.getTime()).toBe(Date.parse(String(postponed!['dueAt'])));
    expect(late!.acceptedAt.getTime()).toBeGreaterThanOrEqual(laterCalls[1]!.dueAt.getTime() - 1000);

    // Failing: each failure is announced, the timer stays armed, the alarm's retry delivers it.
    await schedule('tm-hook-flaky', 'flaky');
    const [flaky] = await fleet.waitForSessionFinished('tm-hook-flaky', 1);
    expect(flaky).toMatchObject({ inputId: 'timer:flaky:1', payload: { note: 'note of flaky' } });
    expect(await fired('tm-hook-flaky', 4)).toEqual([
      expect.objectContaining({ fireCount: 1, outcome: 'error', error: { code: 'internal', message: 'the calendar service is down' } }),
      expect.objectContaining({ fireCount: 1, outcome: 'error', error: expect.objectContaining({ code: 'internal', message: expect.stringContaining('set postponeMs to soon') }) }),
      expect.objectContaining({ fireCount: 1, outcome: 'error', error: expect.objectContaining({ code: 'internal', message: expect.stringContaining('the note the timer.fire hook set contains a NUL') }) }),
      expect.objectContaining({ fireCount: 1, outcome: 'delivered', inputSeq: 1 }),
    ]);
    expect(calls.filter((call) => call.timerId === 'flaky')).toHaveLength(4);
    // Each call's own signal (the forced stop or its deadline), never aborted for a hook that answered in time.
    expect(new Set(calls.map((call) => call.signal)).size).toBe(calls.length);
    expect(calls.every((call) => call.signal instanceof AbortSignal && !call.signal.aborted)).toBe(true);

    // Each announced outcome is counted (a recurring timer may have fired again before its cancel).
    const scraped = await (await fetch(`http://127.0.0.1:${String(worker.healthPort)}/metrics`)).text();
    const firings = (outcome: string) => Number(new RegExp(`^loopfleet_timer_firings_total\\{outcome="${outcome}",queue="[^"]+"\\} (\\d+)$`, 'm').exec(scraped)?.[1]);
    expect(firings('delivered')).toBeGreaterThanOrEqual(4);
    expect(firings('skipped')).toBeGreaterThanOrEqual(1);
    expect(firings('cancelled')).toBe(1);
    expect(firings('postponed')).toBe(1);
    expect(firings('error')).toBe(3);
  });

  it('a timer.fire hook that waits is released by a forced stop through its signal; the timer stays armed, nothing delivered', async () => {
    const sessionId = 'tm-hook-forced';
    let entered: () => void = () => {};
    const inHook = new Promise<void>((resolve) => (entered = resolve));
    let sawAbort = false;
    const hooks = new HookRegistry().register('timer.fire', async (fire) => {
      if (fire.timerId !== 'held') return;
      entered();
      await new Promise<void>((resolve) => fire.signal.addEventListener('abort', () => resolve(), { once: true }));
      sawAbort = fire.signal.aborted;
      throw new Error('stopped while deciding');
    });
    const worker = await fleet.startWorker({ hooks });
    await queue.timers.schedule(sessionId, { delayMs: 0, note: 'not now', timerId: 'held' });
    await inHook;
    await worker.close({ force: true });
    expect(sawAbort).toBe(true);
    expect(await getTimer(fleet.pool, sessionId, 'held')).toMatchObject({ status: 'armed', fireCount: 0 });
    expect(await fleet.store.listInputs(sessionId, { limit: 10 })).toEqual([]);
    // The alarm is still to run: left active with the stopped worker's lock, for BullMQ's stalled check
    // (docs/fleet.md, "Timers"), or, when the failure was recorded before the connections closed, set
    // for its retry.
    expect(['active', 'delayed', 'waiting', 'prioritized']).toContain(await (await fleet.queue.getJob(timerJobId(sessionId, 'held', 0)))?.getState());
  });

  it('a timer.fire hook that does not answer in time: its signal is aborted, the firing is an error, and the retry delivers it', async () => {
    const sessionId = 'tm-hook-slow';
    const reasons: unknown[] = [];
    let calls = 0;
    // Only this test's timer: an earlier test's alarm may still come due on this worker.
    const hooks = new HookRegistry().register('timer.fire', async (fire) => {
      if (fire.timerId !== 'slow') return 'continue';
      calls += 1;
      if (calls > 1) return 'continue';
      await new Promise<void>((resolve) => fire.signal.addEventListener('abort', () => resolve(), { once: true }));
      reasons.push(fire.signal.reason);
      return 'skip';
    });
    await fleet.startWorker({ hooks, settings: { timerHookTimeoutMs: 300 } });
    await queue.timers.schedule(sessionId, { delayMs: 0, note: 'slow hook', timerId: 'slow' });
    expect((await fleet.waitForSessionIdle(sessionId, 1)).map((input) => input.inputId)).toEqual(['timer:slow:1']);
    // The late 'skip' of the first call, after its deadline, changed nothing.
    expect(await firedEvents(sessionId)).toEqual([
      expect.objectContaining({ fireCount: 1, outcome: 'error', error: { code: 'internal', message: 'the timer.fire hook did not answer within 300 ms' } }),
      expect.objectContaining({ fireCount: 1, outcome: 'delivered', inputSeq: 1 }),
    ]);
    expect(reasons).toEqual([expect.objectContaining({ code: 'internal', message: 'the timer.fire hook did not answer within 300 ms' })]);
    expect(await getTimer(fleet.pool, sessionId, 'slow')).toMatchObject({ status: 'fired', fireCount: 1 });
  });

  it('the timer.fire hook does not run again for a firing already delivered (a worker died before recording it)', async () => {
    const sessionId = 'tm-hook-crash';
    let ran = 0;
    const hooks = new HookRegistry().register('timer.fire', (fire) => {
      if (fire.timerId !== 'decided') return 'continue';
      ran += 1;
      return 'skip';
    });
    await queue.timers.schedule(sessionId, { delayMs: 0, note: 'decided before', timerId: 'decided' });
    await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'timer', payload: { timerId: 'decided', note: 'decided before', fireCount: 1 }, inputId: 'timer:decided:1' });
    await fleet.startWorker({ hooks });
    await fleet.waitFor('the firing recorded', async () => ((await getTimer(fleet.pool, sessionId, 'decided'))?.status === 'fired' ? true : undefined));
    expect(ran).toBe(0);
    expect((await fleet.waitForSessionIdle(sessionId, 1)).map((input) => input.inputId)).toEqual(['timer:decided:1']);
  });

  it.each([
    [{ note: 'x' }, 'exactly one of delayMs and at'],
    [{ delayMs: 1, at: new Date(), note: 'x' }, 'exactly one of delayMs and at'],
    [{ delayMs: -1, note: 'x' }, 'delayMs must be an integer'],
    [{ delayMs: 1.5, note: 'x' }, 'delayMs must be an integer'],
    [{ at: 'tomorrow', note: 'x' }, 'at must be a Date'],
    // Past Postgres's range this failed the write as system.infrastructure, retryable; year 9999 was taken.
    [{ at: new Date(-8.64e15), note: 'x' }, 'at must be a valid Date within 366 days of now'],
    [{ at: '9999-01-01T00:00:00Z', note: 'x' }, 'at must be a valid Date within 366 days of now (a past time fires at once); got 9999-01-01T00:00:00.000Z'],
    [{ at: Date.now() + 367 * 86_400_000, note: 'x' }, 'within 366 days of now'],
    [{ at: Date.now() - 367 * 86_400_000, note: 'x' }, 'within 366 days of now'],
    [{ delayMs: 0, note: '   ' }, 'note must be a non-blank string'],
    [{ delayMs: 0, note: 'x'.repeat(10_001) }, 'note must be a non-blank string'],
    // Before: Postgres refused the NUL as system.infrastructure (retryable), and a lone surrogate was
    // stored as U+FFFD (the agent told another note than the one scheduled).
    [{ delayMs: 0, note: 'a\u0000b' }, 'note contains a NUL character'],
    [{ delayMs: 0, note: 'a\ud800b' }, 'note contains an unpaired UTF-16 surrogate'],
    [{ delayMs: 0, note: 'x', everyMs: 999 }, 'everyMs must be an integer from 1000'],
    [{ delayMs: 0, note: 'x', timerId: 'has space' }, 'timerId must be'],
    [{ delayMs: 0, note: 'x', timerId: 'x'.repeat(101) }, 'timerId must be'],
    [{ delayMs: 0, note: 'x', repeat: true }, 'unknown field(s) repeat'],
  ])('refuses %j with input.invalid and writes nothing', async (options, message) => {
    await expect(queue.timers.schedule('tm-bad', options as never)).rejects.toMatchObject({ code: 'input.invalid', message: expect.stringContaining(message) });
    await expect(queue.add('timer', Object.assign({ sessionId: 'tm-bad' }, options) as never)).rejects.toMatchObject({ code: 'input.invalid' });
    expect(await fleet.store.getSession('tm-bad')).toBeNull();
    expect(await listTimers(fleet.pool, 'tm-bad', { all: true })).toEqual([]);
  });

  it('refuses a session id no session may take, and a timer job whose data is not a timer alarm fails at once', async () => {
    await expect(queue.add('timer', { sessionId: 'a:seq', delayMs: 0, note: 'x' })).rejects.toMatchObject({ code: 'session.invalid_id' });
    await fleet.startWorker();
    const job = await fleet.queue.add(JOB.timer, { sessionId: 'tm-raw', timerId: 'has space', fireCount: 0 });
    const failed = await fleet.waitFor('the job to fail', async () => ((await job.getState()) === 'failed' ? fleet.queue.getJob(job.id!) : undefined));
    expect(failed?.failedReason).toMatch(/^input\.invalid: invalid timer job data: timerId/);
    expect(failed?.attemptsMade).toBe(1);
  });
});

describe('the agent’s timers (LOOPFLEET_AGENT_TIMERS)', () => {
  let fleet: FleetFixture;

  beforeAll(async () => {
    fleet = await FleetFixture.create('agent_timers', { LOOPFLEET_AGENT_TIMERS: 'true' });
  });

  afterAll(async () => {
    await fleet?.close();
  });

  it('schedule_wakeup sets a durable timer on the agent’s own session; its firing comes back as the next input', async () => {
    const llm = new ScriptedLlm(
      [
        { toolCalls: [{ id: 'wake1', name: 'schedule_wakeup', arguments: { action: 'schedule', delay_seconds: 0, note: 'look at the queue again' } }] },
        { text: 'I will look again.' },
        { toolCalls: [{ id: 'list1', name: 'schedule_wakeup', arguments: { action: 'list' } }] },
        { text: 'Looked again.' },
      ],
      { whenExhausted: 'error' },
    );
    await fleet.startWorker({ llm });
    await acceptAndKick(fleet.acceptDeps, { sessionId: 'agent-wake', kind: 'send', payload: { input: 'remind yourself' } });
    const inputs = await fleet.waitForSessionIdle('agent-wake', 2);
    expect(inputs.map((input) => [input.kind, input.inputId, input.status])).toEqual([
      ['send', expect.any(String), 'done'],
      ['timer', 'timer:wake-wake1:1', 'done'],
    ]);
    expect(llm.requests[0]!.tools.map((tool) => tool.name)).toContain('schedule_wakeup');
    const transcript = await fleet.transcript('agent-wake');
    expect(transcript).toContain('user: <timer id="wake-wake1" firing="1">\nlook at the queue again\n</timer>');
    // The tool result of the schedule, and the list after the firing (a one-shot that fired is not armed).
    expect(transcript.find((line) => line.startsWith('tool: {"timer_id":"wake-wake1"'))).toMatch(/"status":"armed".*"every_seconds":null/);
    expect(transcript).toContain('tool: {"timers":[]}');
    expect(await getTimer(fleet.pool, 'agent-wake', 'wake-wake1')).toMatchObject({ createdBy: 'agent', status: 'fired', fireCount: 1 });
  });
});

describe('hooks from the LOOPFLEET_HOOKS module', () => {
  let fleet: FleetFixture;
  let queue: SessionQueue;

  beforeAll(async () => {
    fleet = await FleetFixture.create('hooks_module', { LOOPFLEET_HOOKS: fileURLToPath(new URL('./fixtures/fleet-hooks.ts', import.meta.url)) });
    queue = SessionQueue.fromEnv(fleet.env);
  });

  afterAll(async () => {
    await queue?.close();
    await fleet?.close();
  });

  it('a worker loads the module and its timer.fire hook decides each firing', async () => {
    await fleet.startWorker();
    await queue.timers.schedule('tm-module', { delayMs: 0, note: 'drop me', timerId: 'drop' });
    await queue.timers.schedule('tm-module', { delayMs: 0, note: 'wake up', timerId: 'shout' });
    const [input] = await fleet.waitForSessionFinished('tm-module', 1);
    expect(input).toMatchObject({ inputId: 'timer:shout:1', payload: { note: 'WAKE UP' } });
    await fleet.waitFor('the skipped firing recorded', async () => ((await getTimer(fleet.pool, 'tm-module', 'drop'))?.status === 'fired' ? true : undefined));
    expect((await fleet.store.listInputs('tm-module', { limit: 10 })).map((listed) => listed.inputId)).toEqual(['timer:shout:1']);
  });
});
