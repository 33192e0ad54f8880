import { createServer, type Server, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkerProcess } from '../../support/worker-process.js';

/**
 * Bad configuration fails at start-up, before any side effect (I8): a `LOOPFLEET_TOOLS`
 * module that throws while loading, exports an invalid tool, or is missing makes `loopfleet worker`
 * exit 1 with a message naming the module and the problem — without connecting to anything; so do a
 * `LOOPFLEET_HOOKS` module with an invalid hook and a bad `WORKER_HEAP_GROWTH_PERCENT`, and a good one is set (and logged) first, as is the young
 * generation node was started with. Postgres and Redis point at a listener of this test that counts
 * connection attempts.
 */
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

describe('loopfleet worker refuses a bad tools module before connecting', () => {
  let sentinel: Server;
  let port = 0;
  const connections: Socket[] = [];

  beforeAll(async () => {
    sentinel = createServer((socket) => connections.push(socket));
    await new Promise<void>((resolve) => sentinel.listen(0, '127.0.0.1', () => resolve()));
    port = (sentinel.address() as { port: number }).port;
  });

  afterAll(async () => {
    for (const socket of connections) socket.destroy();
    await new Promise<void>((resolve) => sentinel.close(() => resolve()));
  });

  it.concurrent.each([
    ['throws while loading', 'throwing-tools.ts', /LOOPFLEET_TOOLS: cannot load .*throwing-tools\.ts: fixture tools module exploded at load/],
    ['exports an invalid tool', 'invalid-tools.ts', /LOOPFLEET_TOOLS: .*invalid-tools\.ts: .*name must be 1–64 characters/],
    ['does not exist', 'no-such-tools.ts', /LOOPFLEET_TOOLS: cannot load .*no-such-tools\.ts/],
  ])('a tools module that %s: exit 1 with a clear message, no connection attempted', async (_label, file, message) => {
    const worker = WorkerProcess.spawn(`startup-${file}`, {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/never`,
      REDIS_URL: `redis://127.0.0.1:${port}`,
      LOOPFLEET_TOOLS: fixture(file),
      METRICS_PORT: '0',
      LOG_LEVEL: 'info',
    });
    const exit = await worker.waitForExit(60_000);
    expect(exit, worker.diagnostics()).toEqual({ code: 1, signal: null });
    expect(worker.stderr).toMatch(/^loopfleet worker: \[tool\.definition_invalid\] /);
    expect(worker.stderr).toMatch(message);
    expect(worker.logs.some((line) => line.msg === 'worker started')).toBe(false);
    expect(connections).toHaveLength(0);
  }, 90_000);

  it.concurrent.each([
    ['has an invalid field', 'invalid-agents.json', /^loopfleet worker: \[config\.invalid\] LOOPFLEET_AGENTS \(.*invalid-agents\.json\): agent "support": maxRounds: /],
    ['lists a tool the worker does not have', 'unknown-tool-agents.ts', /^loopfleet worker: \[config\.invalid\] agent "coder": tools: unknown tool\(s\) run_tests; known: /],
    ['does not exist', 'no-such-agents.json', /^loopfleet worker: \[config\.invalid\] LOOPFLEET_AGENTS \(.*no-such-agents\.json\): cannot read the file \(ENOENT\)/],
  ])('an agents file that %s: exit 1 with a message naming the agent and field, no connection attempted', async (_label, file, message) => {
    const worker = WorkerProcess.spawn(`startup-${file}`, {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/never`,
      REDIS_URL: `redis://127.0.0.1:${port}`,
      LOOPFLEET_AGENTS: fixture(file),
      METRICS_PORT: '0',
      LOG_LEVEL: 'info',
    });
    const exit = await worker.waitForExit(60_000);
    expect(exit, worker.diagnostics()).toEqual({ code: 1, signal: null });
    expect(worker.stderr).toMatch(message);
    expect(worker.logs.some((line) => line.msg === 'worker started')).toBe(false);
    expect(connections).toHaveLength(0);
  }, 90_000);

  it('a tools module whose load error quotes the environment: no key, password or URL of it is printed', async () => {
    const secrets = { key: 'sk-startup-9f3c1d', database: 'db-Pw-4e2a', redis: 'redis/pw:7c1b' };
    const databaseUrl = `postgres://postgres:${secrets.database}@127.0.0.1:${port}/never`;
    const worker = WorkerProcess.spawn('startup-env-quoting', {
      DATABASE_URL: databaseUrl,
      REDIS_URL: `redis://:${encodeURIComponent(secrets.redis)}@127.0.0.1:${port}`,
      LLM_PROVIDER: 'openai',
      OPENAI_API_KEY: secrets.key,
      LOOPFLEET_TOOLS: fixture('env-quoting-tools.ts'),
      METRICS_PORT: '0',
      LOG_LEVEL: 'info',
    });
    const exit = await worker.waitForExit(60_000);
    expect(exit, worker.diagnostics()).toEqual({ code: 1, signal: null });
    expect(worker.stderr).toMatch(/^loopfleet worker: \[tool\.definition_invalid\] LOOPFLEET_TOOLS: cannot load .*env-quoting-tools\.ts: cannot reach the vault: key \[redacted\], database \[redacted\], redis password \[redacted\]\n$/);
    const printed = worker.stderr + JSON.stringify(worker.logs) + worker.rawStdout.join('\n');
    for (const secret of [...Object.values(secrets), encodeURIComponent(secrets.redis), databaseUrl]) expect(printed).not.toContain(secret);
    expect(connections).toHaveLength(0);
  }, 90_000);

  /** A worker whose tools module throws, with `env` added, run until it exits 1 (what it logged first is kept). */
  async function failingOnItsTools(label: string, env: Record<string, string>): Promise<WorkerProcess> {
    const worker = WorkerProcess.spawn(label, {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/never`,
      REDIS_URL: `redis://127.0.0.1:${port}`,
      LOOPFLEET_TOOLS: fixture('throwing-tools.ts'),
      METRICS_PORT: '0',
      LOG_LEVEL: 'info',
      ...env,
    });
    const exit = await worker.waitForExit(60_000);
    expect(exit, worker.diagnostics()).toEqual({ code: 1, signal: null });
    return worker;
  }

  // The command sets V8's heap growth first thing (src/worker/heap-growth.ts), so even a worker that
  // then fails on its tools has logged what it set.
  it.concurrent.each([
    ['unset: the default, 100 %', undefined, { applied: true, percent: 100 }],
    ['250', '250', { applied: true, percent: 250 }],
    ['0: V8 keeps its own factor', '0', { applied: false, reason: 'v8-default' }],
  ])('WORKER_HEAP_GROWTH_PERCENT %s', async (_label, percent, heapGrowth) => {
    const worker = await failingOnItsTools(`startup-heap-${percent ?? 'default'}`, percent === undefined ? {} : { WORKER_HEAP_GROWTH_PERCENT: percent });
    expect(worker.logs.find((line) => line.msg === 'V8 heap growth')?.['heapGrowth'], worker.diagnostics()).toEqual(heapGrowth);
    expect(connections).toHaveLength(0);
  }, 90_000);

  // Node's --max-semi-space-size cannot be set from inside the process, so the command reports the one
  // it was started with (src/worker/young-generation.ts): null is V8's default.
  it.concurrent.each([
    ['no flag: V8 default', undefined, null],
    ['NODE_OPTIONS=--max-semi-space-size=32', '--max-semi-space-size=32', 32],
  ])('logs its young generation: %s', async (_label, nodeOptions, maxSemiSpaceMb) => {
    const worker = await failingOnItsTools(`startup-semi-${maxSemiSpaceMb ?? 'default'}`, nodeOptions === undefined ? {} : { NODE_OPTIONS: nodeOptions });
    const line = worker.logs.find((entry) => entry.msg === 'V8 young generation');
    expect(line, worker.diagnostics()).toBeDefined();
    expect(line?.['maxSemiSpaceMb']).toBe(maxSemiSpaceMb);
  }, 90_000);

  it('refuses a LOOPFLEET_HOOKS module with an invalid hook, naming it, before connecting', async () => {
    const worker = WorkerProcess.spawn('startup-hooks-bad', {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/never`,
      REDIS_URL: `redis://127.0.0.1:${port}`,
      METRICS_PORT: '0',
      LOOPFLEET_HOOKS: fixture('invalid-hooks.ts'),
    });
    const exit = await worker.waitForExit(60_000);
    expect(exit, worker.diagnostics()).toEqual({ code: 1, signal: null });
    expect(worker.stderr).toMatch(/^loopfleet worker: \[config\.invalid\] LOOPFLEET_HOOKS: .*invalid-hooks\.ts: hook #1: point must be one of .*; got "timer\.fired"/);
    expect(connections).toHaveLength(0);
  }, 90_000);

  it('refuses a WORKER_HEAP_GROWTH_PERCENT that is not a percent from 0 to 1000, before connecting', async () => {
    const worker = WorkerProcess.spawn('startup-heap-bad', {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/never`,
      REDIS_URL: `redis://127.0.0.1:${port}`,
      METRICS_PORT: '0',
      WORKER_HEAP_GROWTH_PERCENT: '2000',
    });
    const exit = await worker.waitForExit(60_000);
    expect(exit, worker.diagnostics()).toEqual({ code: 1, signal: null });
    expect(worker.stderr).toMatch(/^loopfleet worker: \[config\.invalid\] /);
    expect(worker.stderr).toMatch(/WORKER_HEAP_GROWTH_PERCENT: must be at most 1000 \(got "2000"\)/);
    expect(connections).toHaveLength(0);
  }, 90_000);
});
