import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { sessionEvents } from './fixtures/fleet-helpers.js';
import { ProcessFleet } from './fixtures/process-fleet.js';

/**
 * Crash recovery (docs/fleet.md, I5): a worker PROCESS killed with SIGKILL in the middle of a tool
 * call. The next holder continues the input — the in-doubt call re-run with the same idempotency key
 * (policy retry) — and a `resume` queued meanwhile runs after it. An input whose holders keep dying is
 * given up after `maxInputAttempts` with its calls left open: `abortPending` closes them with
 * `<aborted: reason>`, a `resume` runs them again, and a `send` is refused (`session.pending`).
 */
describe('crash mid-tool: takeover, resume and abortPending', () => {
  let pf: ProcessFleet;
  const fast = { sweepEveryMs: 300, sweepGraceMs: 200 };

  beforeAll(async () => {
    pf = await ProcessFleet.create('crash_recovery', { LEASE_TTL_MS: '2000' });
  }, 60_000);

  afterAll(async () => {
    await pf?.close();
  });

  const send = (sessionId: string, text: string) => acceptAndKick(pf.fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: text } });
  const resume = (sessionId: string, payload: Record<string, unknown>) => acceptAndKick(pf.fleet.acceptDeps, { sessionId, kind: 'resume', payload });

  async function ledger(sessionId: string) {
    const result = await pf.fleet.pool.query<{ tool_call_id: string; status: string; attempts: number }>(
      'SELECT tool_call_id, status, attempts FROM tool_calls WHERE session_id = $1 ORDER BY started_at',
      [sessionId],
    );
    return result.rows.map((row) => [row.status, row.attempts]);
  }

  it('kill -9 mid-tool: another worker continues the input (same idempotency key), then a resume queued meanwhile runs', async () => {
    const { fleet } = pf;
    const sessionId = 'crash-takeover';
    const doomed = await fleet.processes.start(pf.workerEnv);
    await send(sessionId, '[tool:hold {"key":"crash"}]');
    await pf.toolStarted('crash', doomed.pid);
    expect((await doomed.kill()).signal).toBe('SIGKILL');
    await resume(sessionId, {});
    pf.release('crash');
    const heir = await fleet.startWorker({ tools: pf.inProcessTools(), settings: fast });
    try {
      const inputs = await fleet.waitForSessionFinished(sessionId, 2, 60_000);
      expect(inputs.map((input) => [input.kind, input.status, input.attempts, input.result?.status])).toEqual([
        ['send', 'done', 2, 'completed'],
        ['resume', 'done', 1, 'completed'],
      ]);
      expect(inputs[0]!.result?.finalText).toBe('Done: held crash');
      const runs = pf.runs('crash');
      expect(runs.map((run) => [run.pid === doomed.pid ? 'doomed' : 'heir', run.event])).toEqual([
        ['doomed', 'start'],
        ['heir', 'start'],
        ['heir', 'end'],
      ]);
      expect(new Set(runs.map((run) => run.idempotencyKey)).size).toBe(1);
      expect(await ledger(sessionId)).toEqual([['completed', 2]]);
      const transcript = await fleet.transcript(sessionId);
      expect(transcript.filter((line) => line === 'tool: held crash')).toHaveLength(1);
      // The resume ran one more round, with no new user message.
      expect(transcript.filter((line) => line.startsWith('user: '))).toHaveLength(1);
      const events = await sessionEvents(fleet.redis, fleet.config.queueName, sessionId);
      expect(events.filter((event) => event.type === 'input_resumed').map((event) => [event.data.inputSeq, event.data.reason])).toEqual([[1, 'worker_lost']]);
      expect(events.filter((event) => event.type === 'input_finished').map((event) => event.data.inputSeq)).toEqual([1, 2]);
    } finally {
      await heir.close();
    }
  }, 180_000);

  it('an input whose worker keeps dying is given up with its calls open; abortPending closes them, resume runs them again', async () => {
    const { fleet } = pf;
    const doomed = await fleet.processes.start(pf.workerEnv);
    await send('poison-abort', '[tool:hold {"key":"poison-abort"}]');
    await send('poison-resume', '[tool:hold {"key":"poison-resume"}]');
    await Promise.all([pf.toolStarted('poison-abort', doomed.pid), pf.toolStarted('poison-resume', doomed.pid)]);
    await doomed.kill();
    // This worker gives up on an input after one attempt that did not finish.
    const worker = await fleet.startWorker({ tools: pf.inProcessTools(), settings: { ...fast, maxInputAttempts: 1 } });
    try {
      for (const sessionId of ['poison-abort', 'poison-resume']) {
        const [input] = await fleet.waitForSessionFinished(sessionId, 1, 60_000);
        expect(input).toMatchObject({ status: 'failed', attempts: 2, errorCode: 'system.infrastructure', result: { status: 'failed' } });
        expect(input!.errorMessage).toMatch(/^gave up on input 1: started 1 time\(s\) without finishing/);
        expect((await fleet.store.loadOpenToolCalls(sessionId)).map((call) => call.status)).toEqual(['started']);
        expect((await fleet.store.getSession(sessionId))!.pending).not.toBeNull();
        const finished = (await sessionEvents(fleet.redis, fleet.config.queueName, sessionId)).filter((event) => event.type === 'input_finished');
        expect(finished.map((event) => [event.data.status, (event.data.error as { code: string }).code])).toEqual([['failed', 'system.infrastructure']]);
      }
      expect(pf.runs('poison-abort').filter((run) => run.pid !== doomed.pid)).toEqual([]);

      await resume('poison-abort', { abortPending: { reason: 'operator gave up' } });
      const aborted = await fleet.waitForSessionIdle('poison-abort', 2);
      expect(aborted[1]).toMatchObject({ status: 'done', result: { status: 'completed', rounds: 0 } });
      expect((await fleet.transcript('poison-abort')).at(-1)).toBe('tool: <aborted: operator gave up>');
      expect(await ledger('poison-abort')).toEqual([['aborted', 1]]);
      expect((await fleet.store.getSession('poison-abort'))!.pending).toBeNull();
      expect(pf.runs('poison-abort').filter((run) => run.pid !== doomed.pid)).toEqual([]);

      pf.release('poison-resume');
      await resume('poison-resume', {});
      const resumed = await fleet.waitForSessionIdle('poison-resume', 2);
      expect(resumed[1]).toMatchObject({ status: 'done', result: { status: 'completed', finalText: 'Done: held poison-resume' } });
      expect(await ledger('poison-resume')).toEqual([['completed', 2]]);
      expect((await fleet.transcript('poison-resume')).slice(-2)).toEqual(['tool: held poison-resume', 'assistant: Done: held poison-resume']);
      // Both sessions are usable again.
      await send('poison-abort', 'hello again');
      const after = await fleet.waitForSessionIdle('poison-abort', 3);
      expect(after[2]).toMatchObject({ status: 'done', result: { finalText: 'Echo: hello again' } });
    } finally {
      await worker.close();
    }
  }, 180_000);

  it('a given-up input publishes the input_finished of every input steered into it (I6)', async () => {
    const { fleet } = pf;
    const sessionId = 'poison-steered';
    const first = await fleet.startWorker({ tools: pf.inProcessTools(), settings: { sweepEveryMs: 3_600_000 } });
    await send(sessionId, '[tool:hold {"key":"poison-steered-1"}]');
    await pf.toolStarted('poison-steered-1');
    const steered = await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', mode: 'steer', payload: { input: '[tool:hold {"key":"poison-steered-2"}]' } });
    pf.release('poison-steered-1');
    // The steer joined the host's next round, whose model call asked for the second hold.
    await pf.toolStarted('poison-steered-2');
    expect(await fleet.store.getInput(sessionId, steered.seq)).toMatchObject({ status: 'done', steeredInto: 1 });
    // As if the tool took its worker down; the next holder gives the host up.
    await first.close({ force: true });
    const worker = await fleet.startWorker({ tools: pf.inProcessTools(), settings: { ...fast, maxInputAttempts: 1 } });
    try {
      const finishes = await fleet.waitFor('an input_finished for the host and the steered input', async () => {
        const events = await sessionEvents(fleet.redis, fleet.config.queueName, sessionId);
        const found = events.filter((event) => event.type === 'input_finished');
        return found.length >= 2 ? found : undefined;
      });
      expect(finishes.map((event) => [event.data.inputSeq, event.data.status, event.data.steeredInto ?? null])).toEqual([
        [1, 'failed', null],
        [steered.seq, 'failed', 1],
      ]);
      expect(await fleet.store.getInput(sessionId, 1)).toMatchObject({ status: 'failed', errorCode: 'system.infrastructure' });
    } finally {
      pf.release('poison-steered-2');
      await worker.close();
    }
  }, 180_000);

  it('a send to a session whose given-up input left its call open is refused with session.pending: the call that kept crashing does not run again', async () => {
    const { fleet } = pf;
    const sessionId = 'poison-then-send';
    const key = 'poison-then-send';
    const first = await fleet.startWorker({ tools: pf.inProcessTools(), settings: { sweepEveryMs: 3_600_000 } });
    await send(sessionId, `[tool:hold {"key":"${key}"}]`);
    await pf.toolStarted(key);
    // As if the tool took its worker down: the input stays running with its call open.
    await first.close({ force: true });
    const worker = await fleet.startWorker({ tools: pf.inProcessTools(), settings: { ...fast, maxInputAttempts: 1 } });
    try {
      const [givenUp] = await fleet.waitForSessionFinished(sessionId, 1, 60_000);
      expect(givenUp).toMatchObject({ status: 'failed', errorCode: 'system.infrastructure' });
      const starts = () => pf.runs(key).filter((run) => run.event === 'start').length;
      expect(starts()).toBe(1);
      await send(sessionId, 'hello');
      // Until the send ends, or the held call starts again (it would hold the send forever).
      await fleet.waitFor('the send to end, or the call to run again', async () =>
        starts() > 1 || (await fleet.store.getInput(sessionId, 2))?.status === 'failed' || (await fleet.store.getInput(sessionId, 2))?.status === 'done' ? true : undefined,
      );
      expect(starts()).toBe(1);
      const refused = await fleet.store.getInput(sessionId, 2);
      expect(refused).toMatchObject({ status: 'failed', errorCode: 'session.pending', result: { status: 'failed' } });
      expect(refused!.errorMessage).toMatch(/^input 1 ended with tool call\(s\) hold \(.+\) still open; run them again with a resume input, or close them with abortPending/);
      // The call stays open for a resume or abortPending, as the given-up input left it.
      expect((await fleet.store.loadOpenToolCalls(sessionId)).map((call) => call.status)).toEqual(['started']);
      expect((await fleet.store.getSession(sessionId))!.pending).toMatchObject({ inputSeq: 1 });
      await fleet.waitForSessionFinished(sessionId, 2);
      const finished = (await sessionEvents(fleet.redis, fleet.config.queueName, sessionId)).filter((event) => event.type === 'input_finished');
      expect(finished.map((event) => [event.data.inputSeq, (event.data.error as { code: string }).code])).toEqual([
        [1, 'system.infrastructure'],
        [2, 'session.pending'],
      ]);
    } finally {
      pf.release(key);
      await worker.close();
    }
  }, 180_000);
});
