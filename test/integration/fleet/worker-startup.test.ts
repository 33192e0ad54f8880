import { createServer, type Server, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkerProcess } from '../../support/worker-process.js';

/**
 * Bad configuration fails at start-up, before any side effect (DESIGN.md I8): a `LOOPFLEET_TOOLS`
 * module that throws while loading, exports an invalid tool, or is missing makes `loopfleet worker`
 * exit 1 with a message naming the module and the problem — without connecting to anything. Postgres
 * and Redis point at a listener of this test that counts connection attempts.
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
});
