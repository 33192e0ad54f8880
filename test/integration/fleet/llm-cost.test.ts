/**
 * Cost end to end: the real OpenAI SDK against the fake server, a price file (`LOOPFLEET_PRICES`), a
 * real worker on real Postgres and Redis. One figure per call, computed by the worker, lands in the
 * usage rows, the input's result and `input_finished`, the session's stats, a usage report and the
 * cost counter — cached prompt tokens billed at the cached price. Results and stats carry picodollars
 * as a number (exact below 2^53, about $9,000); usage reports as integer text.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import type { RunningWorker } from '../../../src/worker/start-worker.js';
import { FakeOpenAiServer, textStream, usageBody } from '../../support/fake-openai-server.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { metricSample, sessionEvents } from './fixtures/fleet-helpers.js';

// USD per million tokens: fresh prompt 2, cache read 1, output 8.
const PRICES = { 'openai:gpt-test*': { input: 2, cachedInput: 1, cacheWrite: 0, output: 8 } };
// 276 fresh × 2 + 1,024 cached × 1 + 50 out × 8 = 1,976 micro-USD; 1,000 × 2 + 10 × 8 = 2,080.
const FIRST_PICO = 1_976_000_000n;
const SECOND_PICO = 2_080_000_000n;

describe('the cost of LLM calls, from the provider’s usage to the bill', () => {
  const server = new FakeOpenAiServer();
  const dir = mkdtempSync(join(tmpdir(), 'loopfleet-prices-'));
  let fleet: FleetFixture;
  let worker: RunningWorker;
  let queue: SessionQueue;
  const sessionId = 'cost-openai';

  beforeAll(async () => {
    writeFileSync(join(dir, 'prices.json'), JSON.stringify(PRICES));
    await server.start();
    fleet = await FleetFixture.create('llm_cost', {
      LLM_PROVIDER: 'openai',
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: server.url,
      LLM_MODEL: 'gpt-test',
      LOOPFLEET_PRICES: join(dir, 'prices.json'),
      METRICS_TENANT_LABEL: 'true',
    });
    worker = await fleet.startWorker({ healthServer: true });
    queue = new SessionQueue({ databaseUrl: fleet.config.databaseUrl, pooler: fleet.config.worker.pooler, redisUrl: fleet.config.redisUrl, queueName: fleet.config.queueName });
    await fleet.store.createSession({ id: sessionId, tenant: 'acme' });
    server.enqueue(
      textStream(['One.'], { usage: usageBody({ prompt: 1300, completion: 50, cached: 1024 }) }),
      textStream(['Two.'], { usage: usageBody({ prompt: 1000, completion: 10 }) }),
    );
    for (const [index, input] of ['one', 'two'].entries()) {
      await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input } });
      await fleet.waitForSessionFinished(sessionId, index + 1);
    }
  });

  afterAll(async () => {
    await queue?.close();
    await fleet?.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores each call’s cost with its usage row, tenant and agent', async () => {
    const rows = [...(await fleet.store.getUsageRounds(sessionId, 1)), ...(await fleet.store.getUsageRounds(sessionId, 2))];
    expect(rows.map((row) => [row.inputSeq, row.cachedTokens])).toEqual([
      [1, 1024],
      [2, 0],
    ]);
    const stored = await fleet.pool.query<{ cost: string; tenant: string }>(
      `SELECT cost_picousd::text AS cost, tenant FROM usage_rounds WHERE session_id = $1 ORDER BY input_seq`,
      [sessionId],
    );
    expect(stored.rows).toEqual([
      { cost: String(FIRST_PICO), tenant: 'acme' },
      { cost: String(SECOND_PICO), tenant: 'acme' },
    ]);
  });

  it('carries the cost on each input’s result and input_finished, and sums it in the stats', async () => {
    const events = await sessionEvents(fleet.redis, fleet.config.queueName, sessionId);
    const finished = events.filter((event) => event.type === 'input_finished').map((event) => event.data.usage as Record<string, unknown>);
    expect(finished).toEqual([
      expect.objectContaining({ cachedTokens: 1024, costPicoUsd: Number(FIRST_PICO), costUsd: 0.001976 }),
      expect.objectContaining({ cachedTokens: 0, costPicoUsd: Number(SECOND_PICO), costUsd: 0.00208 }),
    ]);
    for (const usage of finished) expect(usage).not.toHaveProperty('unpricedCalls');
    const inputs = await fleet.store.listInputs(sessionId, { limit: 10 });
    expect(inputs.map((input) => input.result?.usage)).toEqual(finished);
    const stats = await queue.stats(sessionId);
    expect(stats.totals).toMatchObject({ costPicoUsd: Number(FIRST_PICO + SECOND_PICO), costUsd: 0.004056 });
  });

  it('reports the same sum per session as the inputs’ own figures', async () => {
    const report = await queue.usage({ tenant: 'acme', groupBy: 'session', from: new Date(Date.now() - 3_600_000), to: new Date(Date.now() + 3_600_000) });
    expect(report.rows).toEqual([expect.objectContaining({ key: sessionId, inputs: 2, llmCalls: 2, costPicoUsd: String(FIRST_PICO + SECOND_PICO) })]);
  });

  it('counts it in loopfleet_llm_cost_usd_total, with the tenant label when asked for', async () => {
    const text = await (await fetch(`http://127.0.0.1:${String(worker.healthPort)}/metrics`)).text();
    const cost = metricSample(text, 'loopfleet_llm_cost_usd_total', { provider: 'openai', model: 'gpt-test', tenant: 'acme' });
    expect(cost).toBeCloseTo(0.004056, 9);
  });
});
