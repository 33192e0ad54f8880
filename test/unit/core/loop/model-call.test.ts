import { describe, expect, it } from 'vitest';
import { finishingCancel } from '../../../../src/core/loop/run-outcomes.js';
import type { Llm, LlmCallOptions, LlmRequest, LlmResponse } from '../../../../src/core/ports/llm.js';
import { ScriptedLlm } from '../../../../src/llm/scripted-llm.js';
import { deferred, LoopHarness, runChecked } from './loop-harness.js';

/** Streams some text, reports a switch to a fallback provider, then lets `then` finish the call. */
function fallingBack(then: (request: LlmRequest, options: LlmCallOptions) => Promise<LlmResponse>): Llm {
  return {
    provider: 'primary',
    model: 'a',
    complete: async (request: LlmRequest, options: LlmCallOptions) => {
      options.handlers?.onTextDelta?.('half an answer from the failed provider');
      options.handlers?.onFallback?.({ from: 'primary:a', to: 'backup:b', reason: 'unavailable', errorMessage: 'overloaded' });
      return then(request, options);
    },
  };
}

describe('one LLM call: events and provider fallback', () => {
  it('pairs every attempt: llm_call_started/completed and stream_started/completed', async () => {
    const llm = new ScriptedLlm([{ error: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) }, { text: 'ok', usage: { promptTokens: 3, completionTokens: 1 } }]);
    const harness = new LoopHarness({ llm });
    await harness.send('hi');
    await runChecked(harness);
    expect(harness.sink.ofType('llm_call_started').map((event) => event.callId)).toEqual(['r0.a1', 'r0.a2']);
    const completed = harness.sink.ofType('llm_call_completed');
    expect(completed.map((event) => [event.callId, event.success])).toEqual([
      ['r0.a1', false],
      ['r0.a2', true],
    ]);
    expect(completed[1]!.usage).toMatchObject({ promptTokens: 3, completionTokens: 1 });
    expect(harness.sink.ofType('stream_started')).toHaveLength(2);
    expect(harness.sink.ofType('stream_completed').map((event) => event.success)).toEqual([false, true]);
  });

  it('text streamed before a fallback is announced as discarded and is not part of the reply', async () => {
    const backup = new ScriptedLlm([{ chunks: ['the ', 'real answer'] }]);
    const harness = new LoopHarness({ llm: fallingBack((request, options) => backup.complete(request, options)) });
    await harness.send('hi');
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'the real answer' });
    expect(harness.sink.ofType('stream_discarded')).toEqual([{ type: 'stream_discarded', streamId: 'main', attempt: 1, reason: 'fallback primary:a -> backup:b' }]);
    const types = harness.sink.types();
    expect(types.indexOf('stream_discarded')).toBeLessThan(types.lastIndexOf('stream_delta'));
    expect(harness.sink.ofType('llm_fallback')).toMatchObject([{ type: 'llm_fallback', from: 'primary:a', to: 'backup:b' }]);
    expect(types.indexOf('llm_fallback')).toBeLessThan(types.indexOf('stream_discarded'));
  });

  it('a cancel after a fallback keeps only the new provider\'s text', async () => {
    const entered = deferred();
    const harness = new LoopHarness({
      llm: fallingBack(
        (_request, options) =>
          new Promise((_resolve, reject) => {
            options.handlers?.onTextDelta?.('new provider text');
            options.signal.addEventListener('abort', () => reject(options.signal.reason as Error), { once: true });
            entered.resolve();
          }),
      ),
    });
    await harness.send('hi');
    const controller = new AbortController();
    const run = runChecked(harness, controller.signal);
    await entered.promise;
    controller.abort(finishingCancel('user'));
    expect(await run).toMatchObject({ status: 'cancelled' });
    expect((await harness.history()).at(-1)).toEqual({ role: 'assistant', content: 'new provider text' });
  });
});
