import type { ToolCall } from '../../../../src/core/messages.js';
import { ToolRegistry, type RunToolBatchOptions, type ToolContext } from '../../../../src/core/tools/index.js';
import { simpleTool, toolCall } from './fixtures.js';
import { ManualClock } from './manual-clock.js';

export type Script = Record<string, (ctx: ToolContext) => unknown>;

export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Two tools, `safe` (concurrency-safe) and `serial`, whose handlers run `script[args.key]` (default:
 * yield once, return the key) and log `run:<key>` / `end:<key>` while tracking overlap.
 */
export function harness(script: Script = {}) {
  const log: string[] = [];
  const stats = { active: 0, maxActive: 0 };
  const handler = async (args: Record<string, unknown>, ctx: ToolContext) => {
    const key = String(args['key']);
    log.push(`run:${key}`);
    stats.active += 1;
    stats.maxActive = Math.max(stats.maxActive, stats.active);
    try {
      const step = script[key];
      if (step !== undefined) return await step(ctx);
      await yieldToEventLoop();
      return key;
    } finally {
      stats.active -= 1;
      log.push(`end:${key}`);
    }
  };
  const registry = ToolRegistry.from([simpleTool('safe', handler, { concurrencySafe: true }), simpleTool('serial', handler)]);
  return { registry, log, stats };
}

export const safe = (key: string): ToolCall => toolCall(key, 'safe', { key });
export const serial = (key: string): ToolCall => toolCall(key, 'serial', { key });

export function batchOptions(extra: Partial<RunToolBatchOptions> = {}): RunToolBatchOptions {
  return { sessionId: 's', signal: new AbortController().signal, clock: new ManualClock(), ...extra };
}
