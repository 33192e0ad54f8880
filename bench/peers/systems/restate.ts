/**
 * Restate 1.7 (the `restate-server` binary from the npm registry, its defaults: RocksDB WAL fsync on)
 * and `@restatedev/restate-sdk`: a Virtual Object keyed by session id, whose `run` handler runs one
 * input. Restate runs one invocation per object key at a time, in the order they were sent. Each model
 * call and the tool are `ctx.run` steps (journaled by the server); the answer's deltas are written
 * inside the second call's step, the other entries after each step returns (a replayed invocation
 * writes them again; its journaled steps are not run again). History is the object's state
 * (`ctx.get` / `ctx.set`). Producer: the ingress client, one-way sends with idempotency key = input id.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http2 from 'node:http2';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { packageVersion } from '../lib/package-version.js';
import { verifyStreams, compareOrder } from '../lib/pg-history.js';
import { runStandardInput } from '../lib/standard-loop.js';
import { InputEvents, type ChatMessage } from '../lib/standard.js';
import type { PeerContext, PeerSystem, StandardInput } from '../lib/system.js';

// The SDK uses Promise.withResolvers (Node 22); Node 20 lacks it.
if (typeof (Promise as { withResolvers?: unknown }).withResolvers !== 'function') {
  Object.assign(Promise, {
    withResolvers<T>() {
      let resolve!: (value: T) => void;
      let reject!: (reason: unknown) => void;
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}

// The SDK logs every invocation at INFO; the bench keeps errors only.
process.env['RESTATE_LOGGING'] ??= 'ERROR';

const SERVER = fileURLToPath(new URL('../node_modules/@restatedev/restate-server-linux-x64/bin/restate-server', import.meta.url));
const OBJECT = 'session';

/** The server `setup` started, per run (the orchestrator's process). */
const servers = new Map<string, { child: ChildProcess; dir: string }>();

function ports(ctx: PeerContext): { ingress: string; admin: string } {
  const ingress = ctx.settings['ingressUrl'];
  const admin = ctx.settings['adminUrl'];
  if (typeof ingress !== 'string' || typeof admin !== 'string') throw new Error('restate: setup did not record the server URLs');
  return { ingress, admin };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function waitFor(url: string, deadlineMs: number): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`restate: ${url} not healthy within ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const system: PeerSystem = {
  name: 'restate',
  versions: () => ({ '@restatedev/restate-sdk': packageVersion('@restatedev/restate-sdk'), 'restate-server': packageVersion('@restatedev/restate-server'), node: process.version }),
  // The server's partitions (its unit of parallelism: each a log and a state store; default 24) and its
  // default thread pool (`default-thread-pool-size`, unset = one per core): on 2 cores shared with the
  // worker process, fewer server threads may win. Durability settings stay the defaults (checked with
  // `restate-server --dump-config`: bifrost replicated loglet, log-server `rocksdb-disable-wal-fsync =
  // false`, `rocksdb-disable-wal = false`).
  sweep: [{ partitions: 4 }, { partitions: 24 }, { partitions: 4, threads: 1 }, { partitions: 8, threads: 1 }],
  async setup(ctx) {
    const [ingress, admin, fabric, pgsql] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const dir = mkdtempSync(join(tmpdir(), 'peers-restate-'));
    const child = spawn(SERVER, ['--base-dir', dir, '--no-logo', '--listen-mode', 'tcp', '--default-num-partitions', String(ctx.settings['partitions'] ?? 24)], {
      stdio: ['ignore', 'ignore', process.env.PEERS_DEBUG ? 'inherit' : 'ignore'],
      env: Object.assign({}, process.env, {
        RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingress}`,
        RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${admin}`,
        RESTATE_ADMIN__QUERY_ENGINE__PGSQL_BIND_ADDRESS: `127.0.0.1:${pgsql}`,
        RESTATE_BIND_ADDRESS: `127.0.0.1:${fabric}`,
        RESTATE_ADVERTISED_ADDRESS: `http://127.0.0.1:${fabric}`,
      }, ctx.settings['threads'] === undefined ? {} : { RESTATE_DEFAULT_THREAD_POOL_SIZE: String(ctx.settings['threads']) }),
    });
    servers.set(ctx.runId, { child, dir });
    ctx.settings['ingressUrl'] = `http://127.0.0.1:${ingress}`;
    ctx.settings['adminUrl'] = `http://127.0.0.1:${admin}`;
    await waitFor(`http://127.0.0.1:${admin}/health`, 30_000);
    await waitFor(`http://127.0.0.1:${ingress}/restate/health`, 30_000);
    return { serverPids: child.pid === undefined ? [] : [child.pid] };
  },
  async startWorker(ctx, model) {
    const restate = await import('@restatedev/restate-sdk');
    const redis = new Redis(ctx.redisUrl);
    const session = restate.object({
      name: OBJECT,
      handlers: {
        run: async (rc: import('@restatedev/restate-sdk').ObjectContext, input: StandardInput) => {
          await runStandardInput(model, new InputEvents(redis, ctx.runId, input), input.text, {
            loadHistory: async () => (await rc.get<ChatMessage[]>('history')) ?? [],
            step: (name, fn) => rc.run(name, fn),
            appendHistory: async (messages) => {
              const history = (await rc.get<ChatMessage[]>('history')) ?? [];
              rc.set('history', history.concat(messages));
              const inputs = (await rc.get<string[]>('inputs')) ?? [];
              rc.set('inputs', inputs.concat(input.inputId));
            },
          });
        },
        // Read-only, for verify: a shared handler does not queue behind the key's exclusive `run` calls.
        inputs: restate.handlers.object.shared(async (rc: import('@restatedev/restate-sdk').ObjectSharedContext) => (await rc.get<string[]>('inputs')) ?? []),
      },
    });
    const server = http2.createServer(restate.createEndpointHandler({ services: [session] }));
    const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
    const response = await fetch(`${ports(ctx).admin}/deployments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ uri: `http://127.0.0.1:${port}`, force: true }),
    });
    if (!response.ok) throw new Error(`restate: registering the deployment failed: ${response.status} ${await response.text()}`);
    return {
      async stop() {
        server.close();
        redis.disconnect();
      },
    };
  },
  async createProducer(ctx) {
    const clients = await import('@restatedev/restate-sdk-clients');
    const ingress = clients.connect({ url: ports(ctx).ingress });
    return {
      async add(input) {
        // The untyped send client (the object's definition lives in the worker process).
        const send = ingress.objectSendClient({ name: OBJECT }, input.sessionId) as unknown as { run(input: StandardInput, opts: unknown): Promise<unknown> };
        await send.run(input, clients.rpc.sendOpts({ idempotencyKey: input.inputId }));
      },
      async close() {},
    };
  },
  async verify(ctx, expected) {
    // The history is the object's state: read each session's input ids back through the ingress.
    const clients = await import('@restatedev/restate-sdk-clients');
    const ingress = clients.connect({ url: ports(ctx).ingress });
    const stored = new Map<string, string[]>();
    let historyInputs = 0;
    for (const sessionId of expected.keys()) {
      const inputs = await ingress.objectClient<{ inputs: () => Promise<string[]> }>({ name: OBJECT }, sessionId).inputs();
      stored.set(sessionId, inputs);
      historyInputs += inputs.length;
    }
    const problems = [...compareOrder(expected, stored), ...(await verifyStreams(ctx.redisUrl, ctx.runId, expected))];
    return { ok: problems.length === 0, historyInputs, problems: problems.slice(0, 20) };
  },
  async teardown(ctx) {
    const server = servers.get(ctx.runId);
    if (server === undefined) return;
    servers.delete(ctx.runId);
    server.child.kill('SIGKILL');
    await new Promise((resolve) => (server.child.exitCode !== null ? resolve(undefined) : server.child.once('exit', resolve)));
    rmSync(server.dir, { recursive: true, force: true });
  },
};

export default system;
