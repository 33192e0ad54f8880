import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveUsageQuery } from '../../../src/store/usage/usage-report-options.js';
import { usageReportQuery } from '../../../src/store/usage/usage-report-sql.js';
import { AdminFixture } from './admin-fixture.js';

/**
 * Usage reports on Postgres: the tenant, agent and cost columns (written straight into `usage_rounds`
 * here, as the commit writes them), exact sums past 2^53, the gateway, the CLI and the plan.
 */
describe('usage reports', () => {
  let fx: AdminFixture;

  beforeAll(async () => {
    fx = await AdminFixture.create('usage_report');
    await fx.pool.query(`INSERT INTO sessions (id, tenant, agent) VALUES ('acme-1', 'acme', 'writer'), ('acme-2', 'acme', 'reader'), ('other-1', 'other', 'writer')`);
    // [session, input, round, model, calls, prompt, completion, cached, cache write, cost (null: unpriced), at]
    const rows: Array<[string, number, number, string, number, number, number, number, number, string | null, string]> = [
      ['acme-1', 1, 0, 'gpt-4o', 1, 1000, 100, 200, 0, '3000000000000000', '2026-05-01T10:00:00Z'],
      ['acme-1', 1, 1, 'gpt-4o', 2, 2000, 50, 0, 0, '4000000000000000', '2026-05-01T10:00:01Z'],
      ['acme-1', 2, 0, 'claude-x', 1, 500, 20, 0, 100, '5000000000000001', '2026-05-02T09:00:00Z'],
      ['acme-2', 1, 0, 'local-llama', 3, 300, 30, 0, 0, null, '2026-05-02T23:59:59.999Z'],
      ['acme-2', 2, 0, 'gpt-4o', 1, 10, 1, 0, 0, '7', '2026-06-01T00:00:00Z'],
      ['other-1', 1, 0, 'gpt-4o', 1, 99, 9, 0, 0, '99', '2026-05-01T12:00:00Z'],
    ];
    await fx.pool.query(
      `INSERT INTO usage_rounds (session_id, input_seq, round, provider, model, llm_calls, prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens,
                                 reasoning_tokens, total_tokens, cost_picousd, tenant, agent, created_at)
       SELECT r.s, r.i, r.r, 'openai', r.m, r.c, r.p, r.o, r.ca, r.cw, 0, r.p + r.o, r.cost::bigint, s.tenant, s.agent, r.at::timestamptz
         FROM jsonb_to_recordset($1::jsonb) AS r(s text, i int, r int, m text, c int, p int, o int, ca int, cw int, cost text, at text)
         JOIN sessions AS s ON s.id = r.s`,
      [JSON.stringify(rows.map(([s, i, r, m, c, p, o, ca, cw, cost, at]) => ({ s, i, r, m, c, p, o, ca, cw, cost, at })))],
    );
  });

  afterAll(async () => {
    await fx?.close();
  });

  const may = { from: '2026-05-01T00:00:00Z', to: '2026-06-01T00:00:00Z' };

  it("sums a tenant's month per session as its inputs' own rows sum, costs exact past 2^53", async () => {
    const report = await fx.queue.usage(Object.assign({ tenant: 'acme', groupBy: 'session' as const }, may));
    expect(report.rows.map((r) => r.key)).toEqual(['acme-1', 'acme-2']);
    // Per input, from the session's own usage rows (the June round of acme-2 is outside the window).
    for (const row of report.rows) {
      const own = (await fx.queue.sessions.get(row.key)) === null ? [] : await perInputSums(row.key, may);
      expect(row).toMatchObject({ inputs: own.length, promptTokens: sum(own, 'prompt'), completionTokens: sum(own, 'completion'), llmCalls: sum(own, 'calls') });
    }
    expect(report.rows[0]).toMatchObject({ costPicoUsd: '12000000000000001', costUsd: 12_000, unpricedCalls: 0, cachedTokens: 200, cacheWriteTokens: 100 });
    expect(report.rows[1]).toMatchObject({ costPicoUsd: '0', unpricedCalls: 3 });
    expect(report.totals).toMatchObject({ inputs: 3, llmCalls: 7, promptTokens: 3800, costPicoUsd: '12000000000000001', unpricedCalls: 3 });
  });

  it('groups by UTC day, agent and model', async () => {
    const byDay = await fx.queue.usage(Object.assign({ tenant: 'acme', groupBy: 'day' as const }, may));
    expect(byDay.rows.map((r) => [r.key, r.llmCalls])).toEqual([['2026-05-01', 3], ['2026-05-02', 4]]);
    const byAgent = await fx.queue.usage(Object.assign({ groupBy: 'agent' as const }, may));
    expect(byAgent.rows.map((r) => [r.key, r.promptTokens])).toEqual([['reader', 300], ['writer', 3599]]);
    const byModel = await fx.queue.usage(Object.assign({ tenant: 'acme', agent: 'writer', groupBy: 'model' as const }, may));
    expect(byModel.rows.map((r) => [r.key, r.inputs, r.costPicoUsd])).toEqual([['openai:claude-x', 1, '5000000000000001'], ['openai:gpt-4o', 1, '7000000000000000']]);
  });

  it("answers the gateway: admin scope, a tenant's own usage only", async () => {
    const acme = await fx.headers({ tenant: 'acme', scope: 'admin' });
    const query = `from=${may.from}&to=${may.to}&groupBy=session`;
    const own = await fx.app.inject({ url: `/v1/usage?${query}`, headers: acme });
    expect(own.statusCode).toBe(200);
    expect(own.json()).toMatchObject({ tenant: 'acme', totals: { costPicoUsd: '12000000000000001' } });
    expect((await fx.app.inject({ url: `/v1/usage?${query}&tenant=other`, headers: acme })).statusCode).toBe(403);
    expect((await fx.app.inject({ url: `/v1/usage?${query}`, headers: await fx.headers({ tenant: 'acme', scope: 'read' }) })).statusCode).toBe(403);
    const all = await fx.app.inject({ url: `/v1/usage?${query}`, headers: await fx.headers({ scope: 'admin' }) });
    expect(all.json().rows.map((r: { key: string }) => r.key)).toEqual(['acme-1', 'acme-2', 'other-1']);
    const bad = await fx.app.inject({ url: `/v1/usage?from=${may.to}&to=${may.from}&groupBy=day`, headers: acme });
    expect(bad.statusCode).toBe(400);
  });

  it('prints a table, JSON, and CSV with exact decimal USD', async () => {
    const table = await fx.cli('usage', '--tenant', 'acme', '--from', '2026-05-01', '--to', '2026-06-01', '--by', 'session');
    expect(table.code).toBe(0);
    expect(table.out).toMatch(/^acme-1\s+2\s+4\s+3500\s.*12000\.000000000001\s+0$/m);
    expect(table.out).toMatch(/^TOTAL\s+3\s+7\s+3800\s/m);
    const csv = await fx.cli('usage', '--tenant', 'acme', '--from', '2026-05-01', '--to', '2026-06-01', '--by', 'model', '--csv');
    expect(csv.out.split('\r\n')).toEqual([
      'key,inputs,llm_calls,prompt_tokens,completion_tokens,cached_tokens,cache_write_tokens,reasoning_tokens,total_tokens,cost_usd,cost_picousd,unpriced_calls',
      'openai:claude-x,1,1,500,20,0,100,0,520,5000.000000000001,5000000000000001,0',
      'openai:gpt-4o,1,3,3000,150,200,0,0,3150,7000.00,7000000000000000,0',
      'openai:local-llama,1,3,300,30,0,0,0,330,0.00,0,3',
      '',
    ]);
    const json = await fx.cli('usage', '--from', '2026-05-01', '--to', '2026-06-01', '--json');
    expect(JSON.parse(json.out)).toMatchObject({ groupBy: 'day', totals: { costPicoUsd: '12000000000000100' } });
    expect((await fx.cli('usage', '--json', '--csv')).code).toBe(2);
    expect((await fx.cli('usage', '--from', 'may')).code).toBe(2);
  });

  it("reads a busy tenant's month from the (tenant, created_at) index", async () => {
    await fx.pool.query(`INSERT INTO sessions (id, tenant) SELECT 'busy-' || g, 'busy' FROM generate_series(0, 499) AS g`);
    // 100,000 rounds of one tenant five minutes apart (most of a year), and 20,000 of others.
    await fx.pool.query(
      `INSERT INTO usage_rounds (session_id, input_seq, round, provider, model, prompt_tokens, completion_tokens, total_tokens, cost_picousd, tenant, agent, created_at)
       SELECT 'busy-' || (g % 500), g, 0, 'openai', 'gpt-4o', 100, 10, 110, 1234, 'busy', 'a' || (g % 3), timestamptz '2025-01-01' + g * interval '5 minutes'
         FROM generate_series(1, 100000) AS g`,
    );
    await fx.pool.query(
      `INSERT INTO usage_rounds (session_id, input_seq, round, provider, model, prompt_tokens, completion_tokens, total_tokens, tenant, agent, created_at)
       SELECT 'other-1', 100 + g, 0, 'openai', 'gpt-4o', 1, 1, 2, 'other', 'writer', timestamptz '2025-01-01' + g * interval '25 minutes'
         FROM generate_series(1, 20000) AS g`,
    );
    await fx.pool.query('ANALYZE usage_rounds');
    const month = { tenant: 'busy', from: '2025-06-01T00:00:00Z', to: '2025-07-01T00:00:00Z' };
    for (const groupBy of ['day', 'session'] as const) {
      const { text, values } = usageReportQuery(resolveUsageQuery(Object.assign({ groupBy }, month)));
      const plan = (await fx.pool.query(`EXPLAIN ${text}`, values)).rows.map((row: { 'QUERY PLAN': string }) => row['QUERY PLAN']).join('\n');
      expect(plan).toContain('usage_rounds_tenant_time_idx');
      expect(plan).not.toMatch(/Seq Scan on usage_rounds/);
    }
    const report = await fx.queue.usage(Object.assign({ groupBy: 'day' as const }, month));
    expect(report.rows).toHaveLength(30);
    expect(report.totals).toMatchObject({ llmCalls: 8640, promptTokens: 864_000, costPicoUsd: String(8640 * 1234) });
  });

  /** Each input's sums in the window, straight from its rows. */
  async function perInputSums(sessionId: string, window: { from: string; to: string }): Promise<Array<{ prompt: number; completion: number; calls: number }>> {
    const { rows } = await fx.pool.query(
      `SELECT sum(prompt_tokens)::int AS prompt, sum(completion_tokens)::int AS completion, sum(llm_calls)::int AS calls
         FROM usage_rounds WHERE session_id = $1 AND created_at >= $2 AND created_at < $3 GROUP BY input_seq`,
      [sessionId, window.from, window.to],
    );
    return rows as Array<{ prompt: number; completion: number; calls: number }>;
  }
});

function sum<T extends Record<string, number>>(rows: readonly T[], field: keyof T): number {
  return rows.reduce((total, row) => total + row[field]!, 0);
}
