/**
 * Entry of a system's producer process: `createProducer`, then adds inputs on command, stamping each
 * input's `addedAt` (`Date.now()`) just before the system's own add call. A session's adds are chained
 * (the next starts once the previous resolved), so "add order" per session is well defined; different
 * sessions' adds run `concurrency` at a time (a batch) or at a fixed rate (an open loop, each add sent
 * on its schedule whether or not earlier ones resolved). Argument: `{ systemPath, ctx }`.
 * Requests: `{ type: 'batch', prefix, n, sessions, concurrency }` and
 * `{ type: 'openLoop', prefix, n, sessions, rate }`; both reply `{ added: [inputId, sessionId, addedAt][], ms }`
 * once every add resolved.
 */
import { serve } from './serve.js';
import { pool, sleep } from '../../lib/stats.js';
import { plannedInput } from './extras.js';
import type { PeerContext, PeerSystem } from './system.js';

type Request =
  | { type: 'batch'; prefix: string; n: number; sessions: number; concurrency: number }
  | { type: 'openLoop'; prefix: string; n: number; sessions: number; rate: number };

const { systemPath, ctx } = JSON.parse(process.argv[2] ?? '{}') as { systemPath: string; ctx: PeerContext };
const system = (await import(systemPath)).default as PeerSystem;
const producer = await system.createProducer(ctx);

async function run(request: Request): Promise<{ added: Array<[string, string, number]>; ms: number }> {
  const added: Array<[string, string, number]> = new Array(request.n);
  const last = new Map<string, Promise<void>>();
  const addOne = (i: number): Promise<void> => {
    const planned = plannedInput(request.prefix, i, request.sessions);
    const before = last.get(planned.sessionId);
    const done = (async () => {
      await before;
      const addedAt = Date.now();
      added[i] = [planned.inputId, planned.sessionId, addedAt];
      await producer.add({ sessionId: planned.sessionId, inputId: planned.inputId, text: planned.text, addedAt });
    })();
    last.set(planned.sessionId, done);
    return done;
  };
  const started = performance.now();
  const indexes = Array.from({ length: request.n }, (_, i) => i);
  if (request.type === 'batch') await pool(indexes, request.concurrency, addOne);
  else {
    const adds: Promise<void>[] = [];
    for (const i of indexes) {
      const wait = started + (i * 1000) / request.rate - performance.now();
      if (wait > 1) await sleep(wait);
      adds.push(addOne(i));
    }
    await Promise.all(adds);
  }
  return { added, ms: performance.now() - started };
}

serve<Request>({ ready: { pid: process.pid }, handle: run, close: () => producer.close() });
