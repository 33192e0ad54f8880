import { describe, expect, it } from 'vitest';
import { LlmNonRetryableError } from '../../../../src/core/errors/index.js';
import type { SessionStore, StepCommit } from '../../../../src/core/ports/session-store.js';
import { ScriptedLlm } from '../../../../src/llm/scripted-llm.js';
import { InMemorySessionStore } from '../../../support/fakes/in-memory-session-store.js';
import { LoopHarness, runChecked } from './loop-harness.js';

/** Records what each step commit carried (message roles and the input's status), passing it through. */
function recording(inner: SessionStore, change?: (step: StepCommit, result: Awaited<ReturnType<SessionStore['commitStep']>>) => void) {
  const steps: { roles: string[]; status: string | null }[] = [];
  const store = new Proxy(inner, {
    get(target, property) {
      if (property === 'commitStep') {
        return async (step: StepCommit) => {
          steps.push({ roles: (step.messages ?? []).map((entry) => entry.message.role), status: step.input?.status ?? null });
          const result = await target.commitStep(step);
          change?.(step, result);
          return result;
        };
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store, steps };
}

describe("the input's own message is written with the run's next step", () => {
  it('an answered input is one commit: its message, the reply and the finish', async () => {
    const { store, steps } = recording(new InMemorySessionStore());
    const harness = new LoopHarness({ llm: new ScriptedLlm([{ text: 'hi there' }]), store });
    await harness.send('hello');
    expect(await runChecked(harness)).toMatchObject({ status: 'completed', finalText: 'hi there' });
    expect(steps).toEqual([{ roles: ['user', 'assistant'], status: 'done' }]);
    expect(await harness.history()).toEqual([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'hi there' },
    ]);
    // Announced before the model was asked, with the seq it was written under.
    const types = harness.sink.events.map((event) => event.type);
    expect(types.indexOf('message_appended')).toBeLessThan(types.indexOf('round_started'));
    expect(harness.sink.ofType('message_appended').map((event) => [event.messageSeq, event.role])).toEqual([
      [1, 'user'],
      [2, 'assistant'],
    ]);
  });

  it('the model sees it, as a message.append hook left it, before it is written', async () => {
    const { store, steps } = recording(new InMemorySessionStore());
    let commitsBeforeCall = -1;
    const llm = new ScriptedLlm([
      () => {
        commitsBeforeCall = steps.length;
        return { text: 'ok' };
      },
    ]);
    const harness = new LoopHarness({ llm, store });
    harness.hooks.register('message.append', (ctx) => {
      if (ctx.message.role === 'user') ctx.message = { role: 'user', content: `${String(ctx.message.content)} [checked]` };
    });
    await harness.send('hello');
    expect(await runChecked(harness)).toMatchObject({ status: 'completed' });
    expect(commitsBeforeCall).toBe(0);
    expect(llm.requests[0]!.messages).toEqual([{ role: 'user', content: 'hello [checked]' }]);
    expect((await harness.history())[0]).toEqual({ role: 'user', content: 'hello [checked]' });
  });

  it('a run that ends without a reply writes it with the end', async () => {
    const { store, steps } = recording(new InMemorySessionStore());
    const failing = new LoopHarness({ llm: new ScriptedLlm([{ error: new LlmNonRetryableError('bad request') }]), store });
    await failing.send('hello');
    expect(await runChecked(failing)).toMatchObject({ status: 'degraded' });
    expect(steps).toEqual([{ roles: ['user', 'assistant'], status: 'done' }]);
    expect((await failing.history()).map((message) => message.role)).toEqual(['user', 'assistant']);
  });

  it('a store that writes it under another seq than announced fails the input once, without writing it twice', async () => {
    const inner = new InMemorySessionStore();
    // A store answering with shifted seqs, as if someone else had appended under this lease.
    const { store, steps } = recording(inner, (_step, result) => {
      result.messageSeqs = result.messageSeqs.map((seq) => seq + 10);
    });
    const noop = { name: 'noop', description: 'Does nothing', parameters: { type: 'object', properties: {} }, execute: () => 'ok' };
    const llm = new ScriptedLlm([{ toolCalls: [{ id: 'n1', name: 'noop', arguments: {} }] }, { text: 'never asked' }]);
    const harness = new LoopHarness({ llm, tools: [noop], store });
    await harness.send('hello');
    expect(await harness.runNext()).toMatchObject({ status: 'failed' });
    expect(await inner.getInput('s1', 1)).toMatchObject({ status: 'failed', errorCode: 'state.corrupt' });
    // The closing step answers the open call and ends the input; the message is not in it again.
    expect(steps).toEqual([
      { roles: ['user', 'assistant'], status: null },
      { roles: ['tool'], status: 'failed' },
    ]);
    expect((await harness.history()).filter((message) => message.role === 'user')).toHaveLength(1);
    expect(llm.requests).toHaveLength(1);
  });
});
