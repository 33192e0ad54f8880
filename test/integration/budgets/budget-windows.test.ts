/**
 * Budget windows and caps over time (docs/budgets.md), on an in-process worker and the fake model
 * server (every call reports 2,000 prompt + 1,000 completion tokens): a spent daily cap refuses the
 * next input without calling the model until the database clock (`loopfleet_now()`, redefined in this
 * file's private database) moves to the next day; a cap hit in the middle of an input ends it
 * `budget_exceeded` keeping what it produced, and `resume` after the cap is raised finishes it;
 * `budget_warning` fires once at 80 % and once at 100 %; the sweeper gives back a dead holder's hold.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { sessionEvents } from '../fleet/fixtures/fleet-helpers.js';
import { ProcessFleet } from '../fleet/fixtures/process-fleet.js';

const CALL_TOKENS = 3_000;

describe('budget windows, raises and resume', () => {
  let pf: ProcessFleet;

  beforeAll(async () => {
    pf = await ProcessFleet.create('budget_windows', { LLM_MODEL: 'gpt-4o-mini' }, { usage: { prompt: 2_000, completion: 1_000 } });
    await pf.fleet.startWorker({ tools: pf.inProcessTools() });
  }, 60_000);

  afterEach(async () => {
    await pf.fleet.pool.query(`CREATE OR REPLACE FUNCTION loopfleet_now() RETURNS timestamp with time zone LANGUAGE sql STABLE AS $$ SELECT now() $$`);
  });

  afterAll(async () => {
    await pf?.close();
  });

  async function budget(scope: string, tenant: string, unit: string, period: string, limit: number, sessionId = ''): Promise<number> {
    const result = await pf.fleet.pool.query<{ id: string }>(
      `INSERT INTO budgets (scope, tenant, session_id, unit, period, limit_amount) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id::text`,
      [scope, tenant, sessionId, unit, period, limit],
    );
    return Number(result.rows[0]!.id);
  }

  async function send(sessionId: string, input: string, count: number, kind: 'send' | 'resume' = 'send') {
    await acceptAndKick(pf.fleet.acceptDeps, { sessionId, kind, payload: kind === 'send' ? { input } : {} });
    const inputs = await pf.fleet.waitForSessionFinished(sessionId, count);
    return inputs.find((input) => input.seq === count)!;
  }

  it('a spent daily cap refuses without calling the model until the day rolls over', async () => {
    await pf.fleet.store.createSession({ id: 'roll-1', tenant: 'roll' });
    await budget('tenant', 'roll', 'tokens', 'day', CALL_TOKENS);
    const first = await send('roll-1', 'one', 1);
    expect(first.result?.status).toBe('completed');

    const asked = pf.model.requests.length;
    const second = await send('roll-1', 'two', 2);
    expect(second.result?.status).toBe('budget_exceeded');
    expect(second.errorCode).toBe('budget.exceeded');
    expect(second.result?.budget).toMatchObject({ scope: 'tenant', tenant: 'roll', unit: 'tokens', period: 'day', limit: CALL_TOKENS, used: CALL_TOKENS, reason: 'limit' });
    expect(pf.model.requests.length).toBe(asked);

    await pf.fleet.pool.query(`CREATE OR REPLACE FUNCTION loopfleet_now() RETURNS timestamp with time zone LANGUAGE sql STABLE AS $$ SELECT now() + interval '1 day' $$`);
    const third = await send('roll-1', 'three', 3);
    expect(third.result?.status).toBe('completed');
    const windows = await pf.fleet.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM budget_usage u JOIN budgets b ON b.id = u.budget_id WHERE b.tenant = 'roll'`);
    expect(windows.rows[0]!.n).toBe(2);
  });

  it('a cap hit mid-input keeps what the input produced; resume after a raise finishes it', async () => {
    await pf.fleet.store.createSession({ id: 'raise-1', tenant: 'raise' });
    const id = await budget('session', 'raise', 'tokens', 'total', CALL_TOKENS, 'raise-1');
    const stopped = await send('raise-1', 'look [tool:current_time {}]', 1);
    expect(stopped.result?.status).toBe('budget_exceeded');
    expect(stopped.errorCode).toBe('budget.exceeded');
    const roles = (await pf.fleet.store.loadHistory('raise-1')).map((row) => row.message.role);
    expect(roles).toEqual(['user', 'assistant', 'tool']);
    const events = await sessionEvents(pf.fleet.redis, pf.fleet.config.queueName, 'raise-1');
    expect(events.find((event) => event.type === 'status_changed' && event.data['kind'] === 'budget_exceeded')?.data).toMatchObject({ budgetId: id, scope: 'session', unit: 'tokens', limit: CALL_TOKENS, used: CALL_TOKENS });

    await pf.fleet.pool.query(`UPDATE budgets SET limit_amount = $2, updated_at = now() WHERE id = $1`, [id, 10 * CALL_TOKENS]);
    const resumed = await send('raise-1', '', 2, 'resume');
    expect(resumed.result?.status).toBe('completed');
    expect(resumed.result?.finalText).toMatch(/^Done: /);
  });

  it('budget_warning fires once at 80 % and once at 100 %', async () => {
    await pf.fleet.store.createSession({ id: 'warn-1', tenant: 'warn' });
    const id = await budget('tenant', 'warn', 'tokens', 'total', 4 * CALL_TOKENS);
    for (let seq = 1; seq <= 5; seq += 1) await send('warn-1', `q${seq}`, seq);
    const warnings = (await sessionEvents(pf.fleet.redis, pf.fleet.config.queueName, 'warn-1')).filter((event) => event.type === 'budget_warning');
    expect(warnings.map((event) => event.data)).toMatchObject([
      { budgetId: id, scope: 'tenant', unit: 'tokens', period: 'total', threshold: 0.8, limit: 4 * CALL_TOKENS, used: 4 * CALL_TOKENS },
      { budgetId: id, scope: 'tenant', unit: 'tokens', period: 'total', threshold: 1, limit: 4 * CALL_TOKENS, used: 4 * CALL_TOKENS },
    ]);
  });

  it("the sweeper's release gives back a dead holder's reservation; its late settle is still charged", async () => {
    await pf.fleet.store.createSession({ id: 'dead-1', tenant: 'dead' });
    const id = await budget('tenant', 'dead', 'tokens', 'total', 100_000);
    const lease = await pf.fleet.pool.query<{ token: string }>(
      `UPDATE sessions SET lease_token = nextval('lease_token_seq'), lease_owner = 'ghost', lease_expires_at = now() - interval '1 second' WHERE id = 'dead-1' RETURNING lease_token::text AS token`,
    );
    const token = Number(lease.rows[0]!.token);
    const reserved = await pf.fleet.pool.query<{ status: string }>(`SELECT r_status AS status FROM loopfleet_budget_reserve('dead-1', $1, '1:0:model', 5000, NULL)`, [token]);
    expect(reserved.rows[0]!.status).toBe('reserved');
    const released = await pf.fleet.pool.query<{ n: number }>(`SELECT loopfleet_budget_release_stale(100) AS n`);
    expect(released.rows[0]!.n).toBe(1);
    await pf.fleet.pool.query(`SELECT * FROM loopfleet_budget_settle('dead-1', '1:0:model', 1234, NULL)`);
    const usage = await pf.fleet.pool.query<{ used: string; reserved: string }>(`SELECT used::text, reserved::text FROM budget_usage WHERE budget_id = $1`, [id]);
    expect(usage.rows[0]).toEqual({ used: '1234', reserved: '0' });
  });
});
