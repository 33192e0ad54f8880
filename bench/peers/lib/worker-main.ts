/**
 * Entry of a system's worker process: imports the system module, builds the standard model for the
 * run's model kind, calls `startWorker`, and serves `bench-child` requests until its stdin ends (then
 * `stop()` and exit). Argument: `{ systemPath, ctx }`.
 */
import { serve } from './serve.js';
import { createStandardModel } from './standard.js';
import type { PeerContext, PeerSystem } from './system.js';

const { systemPath, ctx } = JSON.parse(process.argv[2] ?? '{}') as { systemPath: string; ctx: PeerContext };
const system = (await import(systemPath)).default as PeerSystem;
const model = await createStandardModel(ctx.modelKind, ctx.openaiBaseUrl);
const worker = await system.startWorker(ctx, model);
serve<unknown>({
  ready: { pid: process.pid },
  handle: async (request) => {
    if (request === 'ping') return 'pong';
    throw new Error(`unknown request ${JSON.stringify(request)}`);
  },
  close: () => worker.stop(),
});
