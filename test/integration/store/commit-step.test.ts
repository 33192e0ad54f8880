import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../../../src/core/messages.js';
import type { PendingState } from '../../../src/core/pending-state.js';
import type { StepCommit } from '../../../src/core/ports/session-store.js';
import type { InputResult } from '../../../src/core/session-types.js';
import { commitStepStatement, type StepField } from '../../../src/store/steps/commit-step-sql.js';
import type { StepParts } from '../../../src/store/steps/step-parts.js';
import { assistant, countRows, leasedSession, openStoreFixture, runningSession, pollUntil, sessionCounters, sessionId, statementsSent, user, type StoreFixture } from './store-fixture.js';

const pending: PendingState = {
  assistantSeq: 2,
  round: 0,
  inputSeq: 1,
  toolCalls: [
    { id: 'call_1', name: 'lookup', arguments: '{"q":"x"}' },
    { id: 'call_2', name: 'ask', arguments: '{}' },
  ],
  unresolvedIds: ['call_1', 'call_2'],
  interactions: [
    { interactionId: 'input_1', toolCallId: 'call_2', toolName: 'ask', prompt: 'Which one?', options: ['a', 'b'], metadata: { k: 1 } },
  ],
};

const noParts: StepParts = { messages: false, pending: false, compaction: false, ledger: false, usage: false, steer: false, finish: false };

/** Every combination of parts a step can have. */
function allParts(): StepParts[] {
  const names = Object.keys(noParts) as (keyof StepParts)[];
  return Array.from({ length: 2 ** names.length }, (_, bits) => Object.fromEntries(names.map((name, i) => [name, (bits & (1 << i)) !== 0])) as unknown as StepParts);
}

/** The names of a statement's CTEs, in order. */
function cteNames(text: string): string[] {
  return [...text.matchAll(/^(?:WITH )?(\w+) AS \(/gm)].map((match) => match[1]!);
}

function result(overrides: Partial<InputResult> = {}): InputResult {
  return {
    status: 'completed',
    finalText: 'done',
    rounds: 2,
    toolCalls: 3,
    usage: { promptTokens: 100, completionTokens: 20, cachedTokens: 10, cacheWriteTokens: 0, reasoningTokens: 5, totalTokens: 120, llmCalls: 2, costUsd: 0, costPicoUsd: 0 },
    ...overrides,
  };
}

describe('commitStep', () => {
  let fx: StoreFixture;

  beforeAll(async () => {
    fx = await openStoreFixture('commit_step');
  });

  afterAll(async () => {
    await fx.close();
  });

  /** A leased session whose first input is claimed (running). */
  function running(label: string): Promise<{ id: string; token: number }> {
    return runningSession(fx.store, label);
  }

  it('gives messages gapless seqs across steps and round-trips every message shape', async () => {
    const { id, token } = await running('messages');
    const shapes: Message[] = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: '42', name: 'ann' },
      { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', url: 'https://x/y.png', mediaType: 'image/png' }] },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"x"}' }] },
      { role: 'tool', content: '{"ok":true}', toolCallId: 'call_1', name: 'lookup', isError: true },
      { role: 'assistant', content: 'null' },
    ];
    const first = await fx.store.commitStep({
      sessionId: id,
      leaseToken: token,
      messages: shapes.slice(0, 2).map((message) => ({ inputSeq: 1, round: 0, message })),
    });
    const second = await fx.store.commitStep({
      sessionId: id,
      leaseToken: token,
      messages: shapes.slice(2).map((message, i) => ({ inputSeq: 1, round: 1, kind: i === 3 ? 'notice' : 'message', message })),
    });
    expect(first.messageSeqs).toEqual([1, 2]);
    expect(second.messageSeqs).toEqual([3, 4, 5, 6]);

    const window = await fx.store.loadWindow(id);
    expect(window.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    // "42" and "null" stay strings: content is never re-parsed as JSON.
    expect(window.map((m) => m.message)).toEqual(shapes);
    expect(window[5]).toMatchObject({ inputSeq: 1, round: 1, kind: 'notice', state: 'active' });
    expect((await sessionCounters(fx.pool, id))?.nextMessageSeq).toBe(6);
  });

  it('sets, keeps and clears the pending state', async () => {
    const { id, token } = await running('pending');
    await fx.store.commitStep({ sessionId: id, leaseToken: token, pending });
    expect((await fx.store.getSession(id))?.pending).toEqual(pending);
    await fx.store.commitStep({ sessionId: id, leaseToken: token, messages: [{ inputSeq: 1, round: 0, message: user('x') }] });
    expect((await fx.store.getSession(id))?.pending).toEqual(pending);
    await fx.store.commitStep({ sessionId: id, leaseToken: token, pending: null });
    expect((await fx.store.getSession(id))?.pending).toBeNull();
  });

  it('refuses an inconsistent pending state with input.invalid and writes nothing', async () => {
    const { id, token } = await running('bad-pending');
    const bad = { ...pending, unresolvedIds: ['call_9'] };
    await expect(
      fx.store.commitStep({ sessionId: id, leaseToken: token, pending: bad, messages: [{ inputSeq: 1, round: 0, message: user('x') }] }),
    ).rejects.toMatchObject({ code: 'input.invalid' });
    expect(await countRows(fx.pool, 'messages', id)).toBe(0);
    expect((await fx.store.getSession(id))?.pending).toBeNull();
  });

  it('finishes a running input once: stats bump once, a second finish is state.conflict and writes nothing', async () => {
    const { id, token } = await running('finish');
    const done = await fx.store.commitStep({
      sessionId: id,
      leaseToken: token,
      messages: [{ inputSeq: 1, round: 1, message: assistant('done') }],
      input: { seq: 1, status: 'done', result: result() },
    });
    expect(done.messageSeqs).toEqual([1]);
    const input = await fx.store.getInput(id, 1);
    expect(input).toMatchObject({ status: 'done', result: result(), errorCode: null });
    expect(input?.finishedAt).toBeInstanceOf(Date);
    const session = await fx.store.getSession(id);
    expect(session?.status).toBe('idle');
    expect(session?.stats).toMatchObject({
      inputs: 1,
      rounds: 2,
      llmCalls: 2,
      toolCalls: 3,
      promptTokens: 100,
      completionTokens: 20,
      cachedTokens: 10,
      cacheWriteTokens: 0,
      reasoningTokens: 5,
      totalTokens: 120,
    });
    expect(session?.stats.firstInputAt).toBeInstanceOf(Date);

    await expect(
      fx.store.commitStep({
        sessionId: id,
        leaseToken: token,
        messages: [{ inputSeq: 1, round: 2, message: assistant('again') }],
        pending,
        input: { seq: 1, status: 'failed', errorCode: 'internal', errorMessage: 'boom' },
      }),
    ).rejects.toMatchObject({ code: 'state.conflict' });
    const after = await fx.store.getSession(id);
    expect(after?.stats).toEqual(session?.stats);
    expect(after?.pending).toBeNull();
    expect(after?.nextMessageSeq).toBe(1);
    expect(await countRows(fx.pool, 'messages', id)).toBe(1);
    expect((await fx.store.getInput(id, 1))?.status).toBe('done');
  });

  it('refuses to finish an input that is still pending', async () => {
    const id = sessionId('unclaimed');
    const token = await leasedSession(fx.store, id);
    await fx.store.acceptInput({ sessionId: id, kind: 'send', payload: {}, maxBytes: 100 });
    await expect(fx.store.commitStep({ sessionId: id, leaseToken: token, input: { seq: 1, status: 'done', result: result() } })).rejects.toMatchObject({
      code: 'state.conflict',
    });
    expect((await fx.store.getSession(id))?.stats.inputs).toBe(0);
  });

  it('keeps first_input_at and moves last_input_at; a waiting result leaves the session waiting_for_input', async () => {
    const { id, token } = await running('waiting');
    await fx.store.commitStep({ sessionId: id, leaseToken: token, input: { seq: 1, status: 'done', result: result({ status: 'waiting_for_input' }) } });
    const first = await fx.store.getSession(id);
    expect(first?.status).toBe('waiting_for_input');
    await fx.store.acceptInput({ sessionId: id, kind: 'resume', payload: {}, maxBytes: 100 });
    await fx.store.claimNextInput({ sessionId: id, leaseToken: token });
    await fx.store.commitStep({ sessionId: id, leaseToken: token, input: { seq: 2, status: 'failed', errorCode: 'llm.timeout', errorMessage: 'slow' } });
    const second = await fx.store.getSession(id);
    expect(second?.status).toBe('idle');
    expect(second?.stats.inputs).toBe(2);
    expect(second?.stats.rounds).toBe(2);
    expect(second?.stats.firstInputAt?.getTime()).toBe(first?.stats.firstInputAt?.getTime());
    expect(second?.stats.lastInputAt?.getTime()).toBeGreaterThanOrEqual(first?.stats.lastInputAt?.getTime() ?? Infinity);
    expect(await fx.store.getInput(id, 2)).toMatchObject({ status: 'failed', result: null, errorCode: 'llm.timeout', errorMessage: 'slow' });
  });

  it('writes nothing at all under a stale token', async () => {
    const { id, token } = await running('stale');
    expect(await fx.store.releaseLease({ sessionId: id, token })).toBe(true);
    const next = await fx.store.acquireLease({ sessionId: id, owner: 'worker-b', ttlMs: 60_000 });
    if (!next.acquired) throw new Error('expected the lease');
    expect(next.token).toBeGreaterThan(token);
    await expect(
      fx.store.commitStep({
        sessionId: id,
        leaseToken: token,
        messages: [{ inputSeq: 1, round: 0, message: user('x') }],
        pending,
        toolCalls: [{ toolCallId: 'call_1', inputSeq: 1, round: 0, name: 'lookup', args: {}, status: 'started' }],
        usageRounds: [{ inputSeq: 1, round: 0, provider: 'p', model: 'm', llmCalls: 1, promptTokens: 1, completionTokens: 1, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 2 }],
        input: { seq: 1, status: 'done', result: result() },
      }),
    ).rejects.toMatchObject({ code: 'lease.lost' });
    for (const table of ['messages', 'tool_calls', 'usage_rounds']) expect(await countRows(fx.pool, table, id)).toBe(0);
    const session = await fx.store.getSession(id);
    expect(session).toMatchObject({ pending: null, nextMessageSeq: 0, stats: { inputs: 0 } });
    expect((await fx.store.getInput(id, 1))?.status).toBe('running');
  });

  it('refuses malformed steps with input.invalid before touching the database', async () => {
    const { id, token } = await running('malformed');
    const call = { toolCallId: 'c', inputSeq: 1, round: 0, name: 't', args: {}, status: 'started' as const };
    await expect(fx.store.commitStep({ sessionId: id, leaseToken: token, toolCalls: [call, call] })).rejects.toMatchObject({ code: 'input.invalid' });
    const weird = { role: 'robot', content: 'x' } as unknown as Message;
    await expect(fx.store.commitStep({ sessionId: id, leaseToken: token, messages: [{ inputSeq: 1, round: 0, message: weird }] })).rejects.toMatchObject({
      code: 'input.invalid',
    });
    await expect(
      fx.store.commitStep({ sessionId: id, leaseToken: token, messages: [{ inputSeq: 1, round: 0, message: user('a\u0000b') }] }),
    ).rejects.toMatchObject({ code: 'input.invalid' });
    expect(await countRows(fx.pool, 'messages', id)).toBe(0);
  });

  /** A step with every part a finishing step of a run usually has: messages, ledger, usage, the end. */
  function finishingStep(id: string, token: number): StepCommit {
    return {
      sessionId: id,
      leaseToken: token,
      messages: [
        { inputSeq: 1, round: 1, message: { role: 'tool', content: '{"ok":true}', toolCallId: 'call_1', name: 'lookup' } },
        { inputSeq: 1, round: 2, message: assistant('done') },
      ],
      toolCalls: [{ toolCallId: 'call_1', inputSeq: 1, round: 1, name: 'lookup', args: { q: 'x' }, status: 'completed', durationMs: 5 }],
      usageRounds: [{ inputSeq: 1, round: 2, provider: 'p', model: 'm', llmCalls: 1, promptTokens: 9, completionTokens: 1, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 10 }],
      input: { seq: 1, status: 'done', result: result() },
    };
  }


  it('sends a step with messages, tool calls, usage and a finish as exactly one statement', async () => {
    const { id, token } = await running('one-trip');
    const sent = await statementsSent(async () => {
      expect(await fx.store.commitStep(finishingStep(id, token))).toEqual({ messageSeqs: [1, 2], pendingInputs: false, pendingSteers: false });
    });
    expect(sent).toHaveLength(1);
    expect(await countRows(fx.pool, 'messages', id)).toBe(2);
    expect((await fx.store.getInput(id, 1))?.status).toBe('done');
  });

  it('sends a messages-only step as its own variant, without the SQL of the parts it lacks', async () => {
    const statement = commitStepStatement({ ...noParts, messages: true });
    expect(statement.name).toBe('loopfleet_commit_step_m');
    expect(statement.fields).toEqual(['session_id', 'lease_token', 'messages']);
    expect(cteNames(statement.text)).toEqual(['step', 'fence', 'appended']);
    const absentParts = ['INSERT INTO tool_calls', 'INSERT INTO usage_rounds', 'INSERT INTO compactions', 'UPDATE messages', 'UPDATE session_inputs'];
    for (const absent of [...absentParts, 'steered_into', 'stat_', 'pending =', 'clock_timestamp']) {
      expect(statement.text).not.toContain(absent);
    }
    // The full statement has them all, so the check above would see them if they came back.
    const full = commitStepStatement({ messages: true, pending: true, compaction: true, ledger: true, usage: true, steer: true, finish: true });
    expect(cteNames(full.text)).toEqual(['step', 'fence', 'appended', 'folded', 'compacted', 'ledger', 'usage', 'delivered', 'finished', 'joined']);
    for (const present of absentParts) expect(full.text).toContain(present);

    const { id, token } = await running('messages-only');
    const sent = await statementsSent(() => fx.store.commitStep({ sessionId: id, leaseToken: token, messages: [{ inputSeq: 1, round: 0, message: user('x') }] }));
    expect(sent).toEqual([expect.objectContaining({ name: statement.name, text: statement.text })]);
  });

  it('generates every variant as valid SQL whose parameters all have a type, each under its own name', async () => {
    const { id, token } = await running('variants');
    const values: Record<StepField, unknown> = {
      session_id: id,
      lease_token: token + 1_000_000,
      messages: [],
      pending: null,
      tool_calls: [],
      usage_rounds: [],
      fold_seqs: [1],
      compaction: {},
      steered_seqs: [2],
      host_seq: 1,
      finish_seq: 1,
      finish_status: 'done',
      result: null,
      error_code: null,
      error_message: null,
    };
    const names = new Set<string>();
    for (const parts of allParts()) {
      const statement = commitStepStatement(parts);
      names.add(statement.name);
      expect(commitStepStatement({ ...parts })).toBe(statement);
      // A stale token: the fence matches nothing, so this only parses, types and plans the variant.
      const record = Object.fromEntries(statement.fields.map((field) => [field, values[field]]));
      const sent = await fx.pool.query({ name: statement.name, text: statement.text, values: [JSON.stringify([record])] });
      expect(sent.rowCount).toBe(0);
    }
    expect(names.size).toBe(128);
  });

  it('either applies a step racing a takeover whole or refuses it with lease.lost, writing nothing', async () => {
    const outcomes = { applied: 0, refused: 0 };
    for (let i = 0; i < 40; i += 1) {
      const { id, token } = await running(`race-${i}`);
      await fx.pool.query(`UPDATE sessions SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
      const takeover = () => fx.store.acquireLease({ sessionId: id, owner: 'worker-b', ttlMs: 60_000 });
      const step = () => fx.store.commitStep(finishingStep(id, token)).then(() => 'applied' as const, (error: unknown) => error);
      // Alternate which request leaves first, so both orders get their chance.
      const [committed, lease] = i % 2 === 0 ? await Promise.all([step(), takeover()]) : (await Promise.all([takeover(), step()])).reverse();
      expect(lease).toMatchObject({ acquired: true });

      const session = await fx.store.getSession(id);
      const input = await fx.store.getInput(id, 1);
      if (committed === 'applied') {
        outcomes.applied += 1;
        expect(session).toMatchObject({ nextMessageSeq: 2, status: 'idle', stats: { inputs: 1, rounds: 2 } });
        expect(input).toMatchObject({ status: 'done', result: result() });
        for (const table of ['messages', 'tool_calls', 'usage_rounds']) expect(await countRows(fx.pool, table, id)).toBeGreaterThan(0);
      } else {
        outcomes.refused += 1;
        expect(committed).toMatchObject({ code: 'lease.lost' });
        expect(session).toMatchObject({ nextMessageSeq: 0, status: 'running', stats: { inputs: 0, rounds: 0 } });
        expect(input).toMatchObject({ status: 'running', result: null });
        for (const table of ['messages', 'tool_calls', 'usage_rounds']) expect(await countRows(fx.pool, table, id)).toBe(0);
      }
    }
    expect(outcomes.applied + outcomes.refused).toBe(40);
  });

  /** Backends of the store's pool waiting on a lock. */
  async function waitingOnLocks(): Promise<number> {
    const result = await fx.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'loopfleet-test-commit_step' AND wait_event_type = 'Lock'`,
    );
    return result.rows[0]?.n ?? 0;
  }

  /** Runs `during` while another connection holds the session row, locked by `lockSql` in an open transaction. */
  async function whileRowHeld<T>(id: string, lockSql: string, during: () => Promise<T>): Promise<T> {
    const blocker = new pg.Client({ connectionString: fx.db.url, application_name: 'loopfleet-test-blocker' });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query(lockSql, [id]);
      const outcome = await during();
      await blocker.query('COMMIT');
      return outcome;
    } finally {
      await blocker.query('ROLLBACK').catch(() => {});
      await blocker.end();
    }
  }

  it('refuses a step that waited for a takeover holding the session row with lease.lost, writing nothing (forced order)', async () => {
    const { id, token } = await running('forced-takeover');
    const takeover = `UPDATE sessions SET lease_owner = 'worker-b', lease_token = nextval('lease_token_seq') WHERE id = $1`;
    // Wrapped, so that returning it does not wait for it (it waits for the blocker's commit).
    const [step] = await whileRowHeld(id, takeover, async () => {
      const commit = fx.store.commitStep(finishingStep(id, token)).then(() => 'applied', (error: unknown) => error);
      await pollUntil(async () => ((await waitingOnLocks()) >= 1 ? true : undefined), 5_000, 'the step to wait');
      return [commit] as const;
    });
    expect(await step).toMatchObject({ code: 'lease.lost' });
    for (const table of ['messages', 'tool_calls', 'usage_rounds']) expect(await countRows(fx.pool, table, id)).toBe(0);
    expect(await fx.store.getSession(id)).toMatchObject({ nextMessageSeq: 0, status: 'running', stats: { inputs: 0 } });
    expect((await fx.store.getInput(id, 1))?.status).toBe('running');
  });

  it('reports pendingInputs for an input accepted while the step waited for the session row (forced order)', async () => {
    const { id, token } = await running('forced-accept');
    const [accepted, step] = await whileRowHeld(id, 'SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE', async () => {
      const accept = fx.store.acceptInput({ sessionId: id, kind: 'send', payload: { text: 'late' }, maxBytes: 1000 });
      await pollUntil(async () => ((await waitingOnLocks()) >= 1 ? true : undefined), 5_000, 'the accept to wait');
      const commit = fx.store.commitStep(finishingStep(id, token));
      await pollUntil(async () => ((await waitingOnLocks()) >= 2 ? true : undefined), 5_000, 'the step to wait');
      return [accept, commit] as const;
    });
    expect((await accepted).seq).toBe(2);
    // The step's snapshot predates the accept, yet it reports the input that waits after it.
    expect(await step).toEqual({ messageSeqs: [1, 2], pendingInputs: true, pendingSteers: true });
    expect((await fx.store.getInput(id, 2))?.status).toBe('pending');
  });
});
