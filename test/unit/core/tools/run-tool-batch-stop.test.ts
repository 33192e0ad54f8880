import { describe, expect, it } from 'vitest';
import { CancelledError, LeaseLostError } from '../../../../src/core/errors/index.js';
import type { ToolCall } from '../../../../src/core/messages.js';
import { runToolBatch, type ToolOutcome } from '../../../../src/core/tools/index.js';
import { batchOptions, harness, safe, serial, yieldToEventLoop } from './batch-harness.js';
import { deferred, untilAborted } from './fixtures.js';

describe('runToolBatch: stopping', () => {
  it('does not start anything when the signal is already aborted', async () => {
    const { registry, log } = harness();
    const controller = new AbortController();
    controller.abort();
    const started: string[] = [];
    const run = runToolBatch(registry, [safe('a')], batchOptions({ signal: controller.signal, onStart: (c) => void started.push(c.id) }));
    await expect(run).rejects.toBeInstanceOf(CancelledError);
    expect(started).toEqual([]);
    expect(log).toEqual([]);
  });

  it('a cancel during a call starts no later call and rethrows CancelledError', async () => {
    const controller = new AbortController();
    const { registry, log } = harness({
      u1: (ctx) => {
        controller.abort();
        return untilAborted(ctx.signal);
      },
    });
    const started: string[] = [];
    const finished: string[] = [];
    const run = runToolBatch(registry, [serial('u1'), serial('u2'), safe('s3')], batchOptions({
      signal: controller.signal,
      onStart: (c) => void started.push(c.id),
      onFinish: (o) => void finished.push(o.toolCallId),
    }));
    await expect(run).rejects.toBeInstanceOf(CancelledError);
    expect(started).toEqual(['u1']);
    expect(finished).toEqual([]);
    expect(log).toEqual(['run:u1', 'end:u1']);
  });

  it('a cancel while onStart runs calls no later onStart, even for calls already queued in parallel', async () => {
    const controller = new AbortController();
    const { registry, log } = harness();
    const started: string[] = [];
    const onStart = async (call: ToolCall) => {
      started.push(call.id);
      if (call.id === 's1') controller.abort();
    };
    const run = runToolBatch(registry, [safe('s1'), safe('s2'), safe('s3')], batchOptions({ signal: controller.signal, onStart }));
    await expect(run).rejects.toBeInstanceOf(CancelledError);
    expect(started).toEqual(['s1']);
    expect(log).toEqual([]);
  });

  it('a cancel aborts the parallel calls in flight and waits for them before rethrowing', async () => {
    const controller = new AbortController();
    const s2Running = deferred();
    const signals: AbortSignal[] = [];
    const { registry, log } = harness({
      s1: async () => {
        await s2Running.promise;
        controller.abort(new CancelledError('user cancel'));
        return 's1';
      },
      s2: (ctx) => {
        signals.push(ctx.signal);
        s2Running.resolve();
        return untilAborted(ctx.signal);
      },
    });
    const run = runToolBatch(registry, [safe('s1'), safe('s2'), serial('u3')], batchOptions({ signal: controller.signal }));
    await expect(run).rejects.toThrow('user cancel');
    expect(signals[0]?.aborted).toBe(true);
    expect(log).not.toContain('run:u3');
  });

  it('still reports a call that finished before the cancel', async () => {
    const controller = new AbortController();
    const s1Reported = deferred();
    const { registry } = harness({
      s1: () => 'done',
      s2: async (ctx) => {
        await s1Reported.promise;
        controller.abort();
        return untilAborted(ctx.signal);
      },
    });
    const finished: ToolOutcome[] = [];
    const onFinish = (outcome: ToolOutcome) => {
      finished.push(outcome);
      if (outcome.toolCallId === 's1') s1Reported.resolve();
    };
    await expect(runToolBatch(registry, [safe('s1'), safe('s2')], batchOptions({ signal: controller.signal, onFinish }))).rejects.toBeInstanceOf(
      CancelledError,
    );
    expect(finished.map((o) => [o.toolCallId, o.content])).toEqual([['s1', 'done']]);
  });

  it('still reports a call that finished while an earlier report was failing the batch', async () => {
    const s2Reporting = deferred();
    const s1Ended = deferred();
    const { registry } = harness({
      s1: async () => {
        await s2Reporting.promise;
        s1Ended.resolve();
        return 's1';
      },
      s2: () => 's2',
    });
    const failure = new LeaseLostError('lease lost');
    const reported: string[] = [];
    const onFinish = async (outcome: ToolOutcome) => {
      reported.push(outcome.toolCallId);
      if (outcome.toolCallId !== 's2') return;
      s2Reporting.resolve();
      await s1Ended.promise;
      await yieldToEventLoop(); // a macrotask: every microtask of s1's completion has run
      throw failure;
    };
    await expect(runToolBatch(registry, [safe('s1'), safe('s2')], batchOptions({ onFinish }))).rejects.toBe(failure);
    expect(reported).toEqual(['s2', 's1']);
  });

  it('an onStart failure (a lost lease) runs nothing more and rethrows that error', async () => {
    const lost = new LeaseLostError('lease lost');
    const { registry, log } = harness();
    const started: string[] = [];
    const onStart = (call: ToolCall) => {
      started.push(call.id);
      if (call.id === 'u1') throw lost;
    };
    await expect(runToolBatch(registry, [serial('u1'), serial('u2')], batchOptions({ onStart }))).rejects.toBe(lost);
    expect(started).toEqual(['u1']);
    expect(log).toEqual([]);
  });

  it('an onStart failure in a parallel segment aborts the calls in flight and starts no hook after it', async () => {
    const lost = new LeaseLostError('lease lost');
    const s1Signal = deferred<AbortSignal>();
    const { registry, log } = harness({
      s1: (ctx) => {
        s1Signal.resolve(ctx.signal);
        return untilAborted(ctx.signal);
      },
    });
    const started: string[] = [];
    const onStart = async (call: ToolCall) => {
      started.push(call.id);
      if (call.id === 's2') {
        await s1Signal.promise;
        throw lost;
      }
    };
    await expect(runToolBatch(registry, [safe('s1'), safe('s2'), safe('s3')], batchOptions({ onStart }))).rejects.toBe(lost);
    expect(started).toEqual(['s1', 's2']);
    expect((await s1Signal.promise).reason).toBe(lost);
    expect(log).toEqual(['run:s1', 'end:s1']);
  });

  it('an onFinish failure starts no later call and rethrows', async () => {
    const { registry, log } = harness();
    const failure = new Error('commit failed');
    const onFinish = () => Promise.reject(failure);
    await expect(runToolBatch(registry, [serial('u1'), serial('u2')], batchOptions({ onFinish }))).rejects.toBe(failure);
    expect(log).toEqual(['run:u1', 'end:u1']);
  });
});
