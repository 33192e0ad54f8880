import { describe, expect, it } from 'vitest';
import { LlmNonRetryableError } from '../../../../src/core/errors/index.js';
import { DEFAULT_PRICES, PriceTable } from '../../../../src/core/pricing/index.js';
import { ScriptedLlm } from '../../../../src/llm/scripted-llm.js';
import { InMemoryBudgets } from '../../../support/fakes/in-memory-budgets.js';
import { InMemorySessionStore } from '../../../support/fakes/in-memory-session-store.js';
import { LoopHarness, runChecked } from './loop-harness.js';

const noop = { name: 'noop', description: 'Does nothing', parameters: { type: 'object', properties: {} }, execute: () => 'ok' };
const usage = (prompt: number, completion: number) => ({ promptTokens: prompt, completionTokens: completion, totalTokens: prompt + completion });

/** A harness whose loop enforces budgets through the in-memory fake. */
function budgeted(llm: ScriptedLlm, prices = new PriceTable(DEFAULT_PRICES)) {
  const store = new InMemorySessionStore();
  const budgets = new InMemoryBudgets((id) => store.sessionNow(id));
  const harness = new LoopHarness({ llm, store, tools: [noop] });
  Object.assign(harness.deps, { budgets, prices });
  return { harness, budgets, store };
}

describe('budget enforcement in the loop', () => {
  it('a spent budget ends the input budget_exceeded before any model call, naming the budget', async () => {
    const llm = new ScriptedLlm([{ text: 'never' }]);
    const { harness, budgets, store } = budgeted(llm);
    await store.createSession({ id: 's1', tenant: 'acme' });
    const id = budgets.setBudget({ scope: 'tenant', tenant: 'acme', unit: 'tokens', period: 'total', limit: 0 });
    await harness.send('hello');
    const result = await runChecked(harness);
    expect(result!.status).toBe('budget_exceeded');
    expect(llm.requests).toHaveLength(0);
    const input = (await store.getInput('s1', 1))!;
    expect(input.errorCode).toBe('budget.exceeded');
    expect(input.result?.budget).toEqual({ budgetId: id, scope: 'tenant', tenant: 'acme', agent: '', sessionId: '', unit: 'tokens', period: 'total', windowStart: '1970-01-01T00:00:00.000Z', limit: 0, used: 0, reserved: 0, reason: 'limit' });
    expect(harness.sink.ofType('status_changed').at(-1)).toMatchObject({ kind: 'budget_exceeded', budgetId: id, scope: 'tenant', unit: 'tokens', limit: 0, used: 0 });
  });

  it('a cap hit mid-input keeps the rounds it ran; warnings fire at 80 % and 100 %', async () => {
    const llm = new ScriptedLlm([{ toolCalls: [{ name: 'noop' }], usage: usage(900, 100) }, { text: 'never' }]);
    const { harness, budgets, store } = budgeted(llm);
    await store.createSession({ id: 's1', tenant: 'acme' });
    const id = budgets.setBudget({ scope: 'session', tenant: 'acme', sessionId: 's1', unit: 'tokens', period: 'day', limit: 1_000 });
    await harness.send('go');
    const result = await runChecked(harness);
    expect(result!.status).toBe('budget_exceeded');
    expect(llm.requests).toHaveLength(1);
    expect((await harness.history()).map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
    expect(harness.sink.ofType('budget_warning').map((event) => [event.budgetId, event.threshold, event.used])).toEqual([
      [id, 0.8, 1_000],
      [id, 1, 1_000],
    ]);
    expect(budgets.usage(id)).toEqual({ used: 1_000, reserved: 0 });
  });

  it('a money budget refuses a model without a price', async () => {
    const llm = new ScriptedLlm([{ text: 'never' }]);
    const { harness, budgets, store } = budgeted(llm, new PriceTable({}));
    await store.createSession({ id: 's1', tenant: 'acme' });
    budgets.setBudget({ scope: 'tenant', tenant: 'acme', unit: 'usd', period: 'month', limit: 1_000_000_000 });
    await harness.send('hello');
    expect((await runChecked(harness))!.status).toBe('budget_exceeded');
    expect(llm.requests).toHaveLength(0);
  });

  it('a failed call settles at zero: nothing stays reserved', async () => {
    const llm = new ScriptedLlm([{ error: new LlmNonRetryableError('no') }]);
    const { harness, budgets, store } = budgeted(llm);
    await store.createSession({ id: 's1', tenant: 'acme' });
    const id = budgets.setBudget({ scope: 'tenant', tenant: 'acme', unit: 'tokens', period: 'total', limit: 100_000 });
    await harness.send('hello');
    expect((await runChecked(harness))!.status).toBe('degraded');
    expect(budgets.usage(id)).toEqual({ used: 0, reserved: 0 });
  });

  it('a tenant without budgets runs as before', async () => {
    const llm = new ScriptedLlm([{ text: 'hi', usage: usage(10, 2) }]);
    const { harness, store } = budgeted(llm);
    await store.createSession({ id: 's1', tenant: 'free' });
    await harness.send('hello');
    expect((await runChecked(harness))!.status).toBe('completed');
  });
});
