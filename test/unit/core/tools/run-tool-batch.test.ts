import { describe, expect, it } from 'vitest';
import { ConfigInvalidError } from '../../../../src/core/errors/index.js';
import type { ToolCall } from '../../../../src/core/messages.js';
import { systemClock } from '../../../../src/core/ports/clock.js';
import { ToolRegistry, planToolBatch, runToolBatch } from '../../../../src/core/tools/index.js';
import { batchOptions, harness, safe, serial, yieldToEventLoop } from './batch-harness.js';
import { deferred, simpleTool, toolCall } from './fixtures.js';

describe('runToolBatch: order and parallelism', () => {
  it('returns outcomes in call order when a later call finishes first; onFinish sees finishing order', async () => {
    const bDone = deferred();
    const { registry } = harness({
      A: async () => {
        await bDone.promise;
        return 'A';
      },
      B: () => {
        bDone.resolve();
        return 'B';
      },
    });
    const finished: string[] = [];
    const outcomes = await runToolBatch(registry, [safe('A'), safe('B')], batchOptions({ onFinish: (o) => void finished.push(o.toolCallId) }));
    expect(outcomes.map((o) => [o.toolCallId, o.content])).toEqual([['A', 'A'], ['B', 'B']]);
    expect(finished).toEqual(['B', 'A']);
  });

  it('runs consecutive concurrency-safe calls at the same time', async () => {
    // Each waits until both have started: run one after the other, the first would time out.
    const arrived = { count: 0 };
    const bothStarted = deferred();
    const meet = async () => {
      arrived.count += 1;
      if (arrived.count === 2) bothStarted.resolve();
      await bothStarted.promise;
      return 'met';
    };
    const registry = ToolRegistry.from([simpleTool('meet', meet, { concurrencySafe: true, timeoutMs: 2_000 })]);
    const calls = [toolCall('1', 'meet'), toolCall('2', 'meet')];
    const outcomes = await runToolBatch(registry, calls, batchOptions({ clock: systemClock }));
    expect(outcomes.map((o) => o.content)).toEqual(['met', 'met']);
  });

  it('keeps at most `concurrency` safe calls in flight, 4 by default', async () => {
    const calls = ['a', 'b', 'c', 'd', 'e', 'f'].map(safe);
    const two = harness();
    await runToolBatch(two.registry, calls, batchOptions({ concurrency: 2 }));
    expect(two.stats.maxActive).toBe(2);
    const byDefault = harness();
    await runToolBatch(byDefault.registry, calls, batchOptions());
    expect(byDefault.stats.maxActive).toBe(4);
    const one = harness();
    await runToolBatch(one.registry, calls, batchOptions({ concurrency: 1 }));
    expect(one.stats.maxActive).toBe(1);
  });

  it('runs a non-safe call alone, in its place in model order', async () => {
    const { registry, log } = harness();
    const calls = [safe('s1'), safe('s2'), serial('u1'), serial('u2'), safe('s3'), safe('s4')];
    const outcomes = await runToolBatch(registry, calls, batchOptions());
    expect(outcomes.map((o) => o.content)).toEqual(['s1', 's2', 'u1', 'u2', 's3', 's4']);
    const at = (entry: string) => log.indexOf(entry);
    expect(at('run:s2')).toBeLessThan(at('end:s1'));
    expect(at('run:u1')).toBeGreaterThan(Math.max(at('end:s1'), at('end:s2')));
    expect(log.slice(at('run:u1'), at('end:u2') + 1)).toEqual(['run:u1', 'end:u1', 'run:u2', 'end:u2']);
    expect(at('run:s3')).toBeGreaterThan(at('end:u2'));
    expect(at('run:s4')).toBeLessThan(at('end:s3'));
  });

  it('never overlaps non-safe calls', async () => {
    const { registry, stats } = harness();
    await runToolBatch(registry, ['a', 'b', 'c'].map(serial), batchOptions({ concurrency: 4 }));
    expect(stats.maxActive).toBe(1);
  });

  it('calls onStart in model order, one at a time, and awaits it before the call runs', async () => {
    const { registry, log } = harness();
    const inStart = { now: 0, max: 0 };
    const onStart = async (call: ToolCall) => {
      inStart.now += 1;
      inStart.max = Math.max(inStart.max, inStart.now);
      await yieldToEventLoop();
      log.push(`start:${call.id}`);
      inStart.now -= 1;
    };
    await runToolBatch(registry, [safe('s1'), safe('s2'), safe('s3'), serial('u1')], batchOptions({ onStart }));
    expect(log.filter((entry) => entry.startsWith('start:'))).toEqual(['start:s1', 'start:s2', 'start:s3', 'start:u1']);
    for (const key of ['s1', 's2', 's3', 'u1']) expect(log.indexOf(`start:${key}`)).toBeLessThan(log.indexOf(`run:${key}`));
    expect(inStart.max).toBe(1);
  });

  it('keeps failures as data, with an unknown tool run alone in its place', async () => {
    const { registry } = harness({ bad: () => Promise.reject(new Error('nope')) });
    const outcomes = await runToolBatch(registry, [safe('a'), toolCall('x', 'missing'), safe('bad')], batchOptions());
    expect(outcomes.map((o) => o.errorCode)).toEqual([null, 'tool.not_found', 'tool.failed']);
    expect(await runToolBatch(registry, [], batchOptions())).toEqual([]);
  });

  it('rejects a concurrency that is not a positive integer', async () => {
    const { registry } = harness();
    for (const concurrency of [0, -1, 1.5, Number.NaN]) {
      await expect(runToolBatch(registry, [safe('a')], batchOptions({ concurrency }))).rejects.toBeInstanceOf(ConfigInvalidError);
    }
  });
});

describe('planToolBatch', () => {
  it('groups consecutive safe calls and isolates every other call', () => {
    const { registry } = harness();
    const calls = [safe('0'), safe('1'), serial('2'), safe('3'), toolCall('4', 'unknown'), safe('5'), safe('6'), serial('7'), serial('8')];
    expect(planToolBatch(registry, calls)).toEqual([
      { concurrent: true, indices: [0, 1] },
      { concurrent: false, indices: [2] },
      { concurrent: true, indices: [3] },
      { concurrent: false, indices: [4] },
      { concurrent: true, indices: [5, 6] },
      { concurrent: false, indices: [7] },
      { concurrent: false, indices: [8] },
    ]);
  });
});
