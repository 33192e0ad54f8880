import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leasedSession, openStoreFixture, sessionId, user, type StoreFixture } from './store-fixture.js';

/** Rows written behind the store's back must be refused on load, never half-understood. */
describe('persisted-state validation', () => {
  let fx: StoreFixture;

  beforeAll(async () => {
    fx = await openStoreFixture('persisted');
  });

  afterAll(async () => {
    await fx.close();
  });

  async function sessionWithMessage(label: string): Promise<string> {
    const id = sessionId(label);
    const token = await leasedSession(fx.store, id);
    await fx.store.commitStep({ sessionId: id, leaseToken: token, messages: [{ inputSeq: null, round: null, message: user('fine') }] });
    return id;
  }

  it('refuses a message whose content has an unknown shape', async () => {
    const id = await sessionWithMessage('content');
    await fx.pool.query(`INSERT INTO messages (session_id, seq, role, content) VALUES ($1, 2, 'user', '{"weird": true}'::jsonb)`, [id]);
    await expect(fx.store.loadWindow(id)).rejects.toMatchObject({ code: 'state.corrupt' });
    await expect(fx.store.loadHistory(id, { includeCompacted: true })).rejects.toMatchObject({ code: 'state.corrupt' });
  });

  it('refuses an assistant message with malformed tool calls', async () => {
    const id = await sessionWithMessage('toolcalls');
    await fx.pool.query(
      `INSERT INTO messages (session_id, seq, role, content, tool_calls) VALUES ($1, 2, 'assistant', '""', '[{"id": 5}]'::jsonb)`,
      [id],
    );
    await expect(fx.store.loadWindow(id)).rejects.toMatchObject({ code: 'state.corrupt' });
  });

  it('refuses a message with an unknown role (its check constraint dropped to get it in)', async () => {
    const id = await sessionWithMessage('role');
    // This file's private database: dropping the constraint affects no other test.
    await fx.pool.query('ALTER TABLE messages DROP CONSTRAINT messages_role_valid');
    await fx.pool.query(`INSERT INTO messages (session_id, seq, role, content) VALUES ($1, 2, 'robot', '"beep"')`, [id]);
    const error = await fx.store.loadWindow(id).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'state.corrupt' });
    expect((error as Error).message).toContain(`message ${id}#2`);
  });

  it('refuses a session whose pending state it does not understand', async () => {
    const id = sessionId('pending');
    await fx.store.createSession({ id });
    await fx.pool.query(`UPDATE sessions SET pending = '{"bogus": 1}'::jsonb WHERE id = $1`, [id]);
    await expect(fx.store.getSession(id)).rejects.toMatchObject({ code: 'state.corrupt' });
  });

  it('refuses a counter beyond what a number holds exactly, rather than rounding it', async () => {
    const id = sessionId('int8');
    await fx.store.createSession({ id });
    await fx.pool.query(`UPDATE sessions SET stat_total_tokens = 9007199254740993 WHERE id = $1`, [id]);
    await expect(fx.store.getSession(id)).rejects.toMatchObject({ code: 'state.corrupt' });
  });

  it('refuses an input whose stored result is malformed', async () => {
    const id = sessionId('result');
    await fx.store.acceptInput({ sessionId: id, kind: 'send', payload: {}, maxBytes: 100 });
    await fx.pool.query(`UPDATE session_inputs SET result = '{"status": "exploded"}'::jsonb WHERE session_id = $1`, [id]);
    await expect(fx.store.getInput(id, 1)).rejects.toMatchObject({ code: 'state.corrupt' });
    await expect(fx.store.listInputs(id)).rejects.toMatchObject({ code: 'state.corrupt' });
  });
});
