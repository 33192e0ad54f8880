import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresAgentRegistry } from '../../../src/store/agents/postgres-agent-registry.js';
import { countRows, leasedSession, openStoreFixture, sessionId, user, type StoreFixture } from './store-fixture.js';

describe('sessions', () => {
  let fx: StoreFixture;

  beforeAll(async () => {
    fx = await openStoreFixture('sessions');
    // A session may only be created on an agent some worker serves.
    const agents = ['researcher', 'first', 'second'].map((name) => ({ name, version: 'v1', provider: 'openai', model: 'gpt-test', tools: [] }));
    await new PostgresAgentRegistry(fx.pool).registerAgents('test-worker', agents);
  });

  afterAll(async () => {
    await fx.close();
  });

  it('creates a session with defaults and reads it back', async () => {
    const id = sessionId('create');
    const created = await fx.store.createSession({ id });
    expect(created).toMatchObject({
      id,
      agent: 'default',
      systemPrompt: null,
      metadata: {},
      config: {},
      status: 'idle',
      nextSeq: 0,
      nextMessageSeq: 0,
      lease: { owner: null, token: 0, expiresAt: null },
      pending: null,
      cancelRequestedAt: null,
      stats: { inputs: 0, rounds: 0, totalTokens: 0, firstInputAt: null, lastInputAt: null },
    });
    expect(created.createdAt).toBeInstanceOf(Date);
    expect(await fx.store.getSession(id)).toEqual(created);
  });

  it('stores the profile it is given', async () => {
    const id = sessionId('profile');
    await fx.store.createSession({
      id,
      agent: 'researcher',
      systemPrompt: 'Be brief.',
      metadata: { tenant: 't1', tags: ['a'] },
      config: { maxRounds: 5 },
    });
    expect(await fx.store.getSession(id)).toMatchObject({
      agent: 'researcher',
      systemPrompt: 'Be brief.',
      metadata: { tenant: 't1', tags: ['a'] },
      config: { maxRounds: 5 },
    });
  });

  it('accepts a 128-character id, the longest allowed', async () => {
    const id = 'x'.repeat(128);
    await fx.store.createSession({ id });
    expect((await fx.store.getSession(id))?.id).toBe(id);
  });

  it('returns null for a session that does not exist', async () => {
    expect(await fx.store.getSession(sessionId('missing'))).toBeNull();
  });

  it('refuses a duplicate id with session.exists and keeps the original', async () => {
    const id = sessionId('dup');
    await fx.store.createSession({ id, agent: 'first' });
    await expect(fx.store.createSession({ id, agent: 'second' })).rejects.toMatchObject({ code: 'session.exists' });
    expect((await fx.store.getSession(id))?.agent).toBe('first');
  });

  it.each([
    ['empty', ''],
    ['129 characters', 'a'.repeat(129)],
    ['a space', 'a b'],
    ['a slash', 'a/b'],
    ['a number', 42],
    ['null', null],
    ['undefined', undefined],
  ])('refuses an id that is %s with session.invalid_id and writes nothing', async (_label, id) => {
    const before = await totalSessions(fx);
    const bad = id as unknown as string;
    await expect(fx.store.createSession({ id: bad })).rejects.toMatchObject({ code: 'session.invalid_id' });
    await expect(fx.store.getSession(bad)).rejects.toMatchObject({ code: 'session.invalid_id' });
    await expect(fx.store.deleteSession(bad)).rejects.toMatchObject({ code: 'session.invalid_id' });
    await expect(
      fx.store.acceptInput({ sessionId: bad, kind: 'send', payload: { text: 'hi' }, maxBytes: 1000 }),
    ).rejects.toMatchObject({ code: 'session.invalid_id' });
    expect(await totalSessions(fx)).toBe(before);
  });

  it('refuses metadata that is not a plain object with input.invalid', async () => {
    const id = sessionId('meta');
    const bad = ['not', 'an', 'object'] as unknown as Record<string, unknown>;
    await expect(fx.store.createSession({ id, metadata: bad })).rejects.toMatchObject({ code: 'input.invalid' });
    expect(await fx.store.getSession(id)).toBeNull();
  });

  it('deletes a session and everything it owns', async () => {
    const id = sessionId('delete');
    const token = await leasedSession(fx.store, id);
    await fx.store.acceptInput({ sessionId: id, kind: 'send', payload: { text: 'hi' }, maxBytes: 1000 });
    await fx.store.commitStep({
      sessionId: id,
      leaseToken: token,
      messages: [{ inputSeq: 1, round: 0, message: user('hi') }],
      usageRounds: [
        {
          inputSeq: 1,
          round: 0,
          provider: 'scripted',
          model: 'm',
          llmCalls: 1,
          promptTokens: 1,
          completionTokens: 1,
          cachedTokens: 0,
          cacheWriteTokens: 0,
          reasoningTokens: 0,
          totalTokens: 2,
        },
      ],
    });
    expect(await countRows(fx.pool, 'messages', id)).toBe(1);

    expect(await fx.store.deleteSession(id)).toEqual({ leaseToken: expect.any(Number), descendants: [] });
    expect(await fx.store.getSession(id)).toBeNull();
    for (const table of ['session_inputs', 'messages', 'usage_rounds']) {
      expect(await countRows(fx.pool, table, id)).toBe(0);
    }
    expect(await fx.store.deleteSession(id)).toBeNull();
  });

  it('deletes a tree: every descendant with everything it owns (inputs, messages, timers), and nothing else', async () => {
    const root = sessionId('tree');
    const rootToken = await leasedSession(fx.store, root);
    await fx.store.acceptInput({ sessionId: root, kind: 'send', payload: { text: 'hi' }, maxBytes: 1000 });
    await fx.store.claimNextInput({ sessionId: root, leaseToken: rootToken });
    const spawn = (parent: string, token: number, call: string, depth: number) =>
      fx.store.spawnChild({
        parentSessionId: parent,
        leaseToken: token,
        inputSeq: 1,
        toolCallId: call,
        childSessionId: `${parent}:sub:${call}`,
        agent: 'default',
        task: 'work',
        wait: true,
        rootSessionId: root,
        depth,
        maxChildrenPerInput: 5,
      });
    await spawn(root, rootToken, 'call_a', 1);
    const child = `${root}:sub:call_a`;
    const childLease = await fx.store.acquireLease({ sessionId: child, owner: 'worker-b', ttlMs: 60_000 });
    if (!childLease.acquired) throw new Error('expected the child lease');
    const childToken = childLease.token;
    await fx.store.claimNextInput({ sessionId: child, leaseToken: childToken });
    await fx.store.commitStep({ sessionId: child, leaseToken: childToken, messages: [{ inputSeq: 1, round: 0, message: user('work') }] });
    await spawn(child, childToken, 'call_g', 2);
    const grandchild = `${child}:sub:call_g`;
    for (const id of [child, grandchild]) {
      await fx.pool.query(`INSERT INTO timers (session_id, timer_id, due_at) VALUES ($1, 't1', now() + interval '1 hour')`, [id]);
    }
    const bystander = sessionId('tree-bystander');
    await fx.store.createSession({ id: bystander });

    const deleted = await fx.store.deleteSession(root);
    expect(deleted).toEqual({
      leaseToken: rootToken,
      descendants: [
        { sessionId: child, leaseToken: childToken },
        { sessionId: grandchild, leaseToken: 0 },
      ],
    });
    for (const id of [root, child, grandchild]) {
      for (const table of ['sessions', 'session_inputs', 'messages', 'timers']) expect(await countRows(fx.pool, table, id)).toBe(0);
    }
    expect(await countRows(fx.pool, 'sessions', bystander)).toBe(1);
  });

  it('records a cancel request once and lets only the lease holder clear it', async () => {
    const id = sessionId('cancel');
    const token = await leasedSession(fx.store, id);
    const first = await fx.store.requestCancel(id);
    const second = await fx.store.requestCancel(id);
    expect(second.getTime()).toBe(first.getTime());
    await expect(fx.store.clearCancel({ sessionId: id, leaseToken: token + 1 })).rejects.toMatchObject({ code: 'lease.lost' });
    expect((await fx.store.getSession(id))?.cancelRequestedAt).not.toBeNull();
    await fx.store.clearCancel({ sessionId: id, leaseToken: token });
    expect((await fx.store.getSession(id))?.cancelRequestedAt).toBeNull();
    await expect(fx.store.requestCancel(sessionId('nobody'))).rejects.toMatchObject({ code: 'session.not_found' });
  });
});

async function totalSessions(fx: StoreFixture): Promise<number> {
  const result = await fx.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM sessions');
  return result.rows[0]?.n ?? -1;
}
