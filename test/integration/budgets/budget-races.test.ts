/**
 * Budget races (docs/budgets.md): 4 real `loopfleet worker` processes, 200 inputs of one tenant at
 * once through the OpenAI-compatible fake model server, a cap in money, in tokens, and on the root
 * of child-session trees. Whatever the interleaving: the spend stays within the cap plus one call's
 * reservation, every input ends `completed` or `budget_exceeded` and nothing else, `budget_usage`
 * agrees with the usage rows, and no reservation is left behind.
 *
 * Spend is computed from `usage_rounds` tokens × the model's price (gpt-4o-mini: $0.15 / $0.60 per
 * million tokens), independent of the cost column.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { ProcessFleet } from '../fleet/fixtures/process-fleet.js';

const WORKERS = 4;
const INPUTS = 200;
/** What the fake model reports for every call. */
const USAGE = { prompt: 2_000, completion: 1_000 };
/** gpt-4o-mini in picodollars per token. */
const RATES = { input: 150_000, output: 600_000 };
const MAX_OUTPUT_TOKENS = 4_096;
/** One call's reservation at most: a prompt estimate far above these short prompts, plus the output cap. */
const ONE_RESERVATION_TOKENS = 500 + MAX_OUTPUT_TOKENS;
const ONE_RESERVATION_PICO = 500 * RATES.input + MAX_OUTPUT_TOKENS * RATES.output;

describe('budget races on 4 worker processes', () => {
  let pf: ProcessFleet;

  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'loopfleet-budget-races-'));
    const agents = join(dir, 'agents.json');
    await writeFile(agents, JSON.stringify([{ name: 'lead', subagents: ['reader'], maxChildrenPerInput: 50 }, { name: 'reader' }]));
    pf = await ProcessFleet.create(
      'budget_races',
      { LOOPFLEET_AGENTS: agents, LLM_MODEL: 'gpt-4o-mini', WORKER_CONCURRENCY: '4', LEASE_TTL_MS: '5000' },
      { replyDelayMs: 40, usage: USAGE },
    );
    await Promise.all(Array.from({ length: WORKERS }, () => pf.fleet.processes.start()));
  }, 120_000);

  afterAll(async () => {
    await pf?.fleet.processes.killAll();
    await pf?.close();
  });

  async function insertBudget(budget: { scope: string; tenant: string; sessionId?: string; unit: string; limit: number }): Promise<number> {
    const result = await pf.fleet.pool.query<{ id: string }>(
      `INSERT INTO budgets (scope, tenant, session_id, unit, period, limit_amount) VALUES ($1, $2, $3, $4, 'total', $5) RETURNING id::text`,
      [budget.scope, budget.tenant, budget.sessionId ?? '', budget.unit, budget.limit],
    );
    return Number(result.rows[0]!.id);
  }

  async function sendAll(tenant: string, count: number, agent: string, input: (index: number) => string): Promise<string[]> {
    const ids = Array.from({ length: count }, (_, index) => `${tenant}-${index}`);
    for (const id of ids) await pf.fleet.store.createSession({ id, tenant, agent });
    await Promise.all(ids.map((sessionId, index) => acceptAndKick(pf.fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: input(index) } })));
    return ids;
  }

  /** Waits until the tenant has at least `inputs` inputs and all of them are terminal; their result statuses. */
  async function outcomes(tenant: string, inputs: number): Promise<Map<string, number>> {
    await pf.fleet.waitFor(
      `${inputs} inputs of ${tenant} to end`,
      async () => {
        const { rows } = await pf.fleet.pool.query<{ total: number; open: number }>(
          `SELECT count(*)::int AS total, count(*) FILTER (WHERE i.status NOT IN ('done', 'failed', 'cancelled'))::int AS open
             FROM session_inputs i JOIN sessions s ON s.id = i.session_id WHERE s.tenant = $1`,
          [tenant],
        );
        return rows[0]!.total >= inputs && rows[0]!.open === 0 ? true : undefined;
      },
      180_000,
    );
    const { rows } = await pf.fleet.pool.query<{ status: string; n: number }>(
      `SELECT coalesce(i.result->>'status', i.status) AS status, count(*)::int AS n
         FROM session_inputs i JOIN sessions s ON s.id = i.session_id WHERE s.tenant = $1 GROUP BY 1`,
      [tenant],
    );
    return new Map(rows.map((row) => [row.status, row.n]));
  }

  /** Tokens and picodollars the sessions matched by `where` ($1) spent, from their usage rows. */
  async function spend(where: string, param: string): Promise<{ tokens: number; pico: number }> {
    const { rows } = await pf.fleet.pool.query<{ prompt: string | null; completion: string | null }>(
      `SELECT sum(u.prompt_tokens)::text AS prompt, sum(u.completion_tokens)::text AS completion
         FROM usage_rounds u JOIN sessions s ON s.id = u.session_id WHERE ${where}`,
      [param],
    );
    const prompt = Number(rows[0]!.prompt ?? 0);
    const completion = Number(rows[0]!.completion ?? 0);
    return { tokens: prompt + completion, pico: prompt * RATES.input + completion * RATES.output };
  }

  async function usage(budgetId: number): Promise<{ used: number; reserved: number; reservations: number }> {
    const { rows } = await pf.fleet.pool.query<{ used: string; reserved: string }>(`SELECT used::text, reserved::text FROM budget_usage WHERE budget_id = $1`, [budgetId]);
    const held = await pf.fleet.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM budget_reservations WHERE budget_id = $1`, [budgetId]);
    return { used: Number(rows[0]?.used ?? 0), reserved: Number(rows[0]?.reserved ?? 0), reservations: held.rows[0]!.n };
  }

  function expectOnlyCompletedOrExceeded(statuses: Map<string, number>, total: number): void {
    expect([...statuses.keys()].filter((status) => status !== 'completed' && status !== 'budget_exceeded'), pf.fleet.processes.diagnostics()).toEqual([]);
    expect((statuses.get('completed') ?? 0) + (statuses.get('budget_exceeded') ?? 0)).toBe(total);
    expect(statuses.get('completed') ?? 0).toBeGreaterThan(0);
    expect(statuses.get('budget_exceeded') ?? 0).toBeGreaterThan(0);
  }

  it('a $0.01 tenant cap: 200 concurrent inputs spend at most the cap plus one reservation', async () => {
    const cap = 10_000_000_000; // $0.01 in picodollars
    const budgetId = await insertBudget({ scope: 'tenant', tenant: 'usd-cap', unit: 'usd', limit: cap });
    await sendAll('usd-cap', INPUTS, 'reader', (index) => `question ${index}`);
    const statuses = await outcomes('usd-cap', INPUTS);
    expectOnlyCompletedOrExceeded(statuses, INPUTS);
    const spent = await spend('s.tenant = $1', 'usd-cap');
    expect(spent.pico).toBeLessThanOrEqual(cap + ONE_RESERVATION_PICO);
    const row = await usage(budgetId);
    expect(row).toEqual({ used: spent.pico, reserved: 0, reservations: 0 });
  }, 240_000);

  it('a token cap: the same bound in tokens', async () => {
    const cap = 40_000;
    const budgetId = await insertBudget({ scope: 'tenant', tenant: 'token-cap', unit: 'tokens', limit: cap });
    await sendAll('token-cap', INPUTS, 'reader', (index) => `question ${index}`);
    const statuses = await outcomes('token-cap', INPUTS);
    expectOnlyCompletedOrExceeded(statuses, INPUTS);
    const spent = await spend('s.tenant = $1', 'token-cap');
    expect(spent.tokens).toBeLessThanOrEqual(cap + ONE_RESERVATION_TOKENS);
    expect(await usage(budgetId)).toEqual({ used: spent.tokens, reserved: 0, reservations: 0 });
  }, 240_000);

  it('kill -9 of a worker mid-run: its reservations come back, the bound and the books still hold', async () => {
    const cap = 10_000_000_000;
    const budgetId = await insertBudget({ scope: 'tenant', tenant: 'killed', unit: 'usd', limit: cap });
    await sendAll('killed', INPUTS, 'reader', (index) => `question ${index}`);
    // Kill once calls are in flight (some already settled), and start a replacement.
    await pf.fleet.waitFor('calls of tenant killed in flight', async () => {
      const { rows } = await pf.fleet.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM budget_reservations r JOIN sessions s ON s.id = r.session_id WHERE s.tenant = 'killed'`);
      return rows[0]!.n > 0 ? true : undefined;
    });
    await pf.fleet.processes.alive[0]!.kill();
    await pf.fleet.processes.start();
    const statuses = await outcomes('killed', INPUTS);
    expectOnlyCompletedOrExceeded(statuses, INPUTS);
    const spent = await spend('s.tenant = $1', 'killed');
    expect(spent.pico).toBeLessThanOrEqual(cap + ONE_RESERVATION_PICO);
    // A dead holder's hold is given back by the session's next holder or by the sweeper.
    const row = await pf.fleet.waitFor('reservations given back', async () => {
      const current = await usage(budgetId);
      return current.reserved === 0 && current.reservations === 0 ? current : undefined;
    }, 30_000);
    // Every committed round was settled before its commit; a call settled by a holder killed before
    // its commit is charged but redone (it was paid twice), so the budget may count more than the rows.
    expect(row.used).toBeGreaterThanOrEqual(spent.pico);
    expect(row.used).toBeLessThanOrEqual(cap + ONE_RESERVATION_PICO);
  }, 240_000);

  it('child-session trees: 4 roots × 50 children draw from the root session budget', async () => {
    const cap = 60_000;
    const roots = 4;
    const children = 50;
    const tags = (root: number) => Array.from({ length: children }, (_, index) => `[tool:spawn_agent {"agent":"reader","task":"part ${root}.${index}"}]`).join(' ');
    const ids = Array.from({ length: roots }, (_, index) => `tree-${index}`);
    const budgets = new Map<string, number>();
    for (const id of ids) {
      await pf.fleet.store.createSession({ id, tenant: 'tree', agent: 'lead' });
      budgets.set(id, await insertBudget({ scope: 'session', tenant: 'tree', sessionId: id, unit: 'tokens', limit: cap }));
    }
    await Promise.all(ids.map((sessionId, index) => acceptAndKick(pf.fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: tags(index) } })));
    const statuses = await outcomes('tree', roots * (children + 1));
    // Each child's answer also reaches its parent as an input of the parent (kind `child`).
    const total = [...statuses.values()].reduce((sum, n) => sum + n, 0);
    expect(total).toBeGreaterThanOrEqual(roots * (children + 1));
    expectOnlyCompletedOrExceeded(statuses, total);
    // The root's last call carries 50 tool results: its prompt estimate is larger than a child's.
    const rootReservation = ONE_RESERVATION_TOKENS + 10_000;
    for (const id of ids) {
      const spent = await spend('(s.id = $1 OR s.root_session_id = $1)', id);
      expect(spent.tokens).toBeLessThanOrEqual(cap + rootReservation);
      expect(await usage(budgets.get(id)!)).toEqual({ used: spent.tokens, reserved: 0, reservations: 0 });
    }
  }, 240_000);
});
