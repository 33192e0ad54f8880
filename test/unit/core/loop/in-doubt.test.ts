import { describe, expect, it } from 'vitest';
import { CancelledError } from '../../../../src/core/errors/index.js';
import { protocolViolations } from '../../../../src/core/history/index.js';
import type { ToolCallRecord } from '../../../../src/core/session-types.js';
import type { InDoubtPolicy, ToolContext } from '../../../../src/core/tools/index.js';
import { ScriptedLlm } from '../../../../src/llm/scripted-llm.js';
import { InMemorySessionStore } from '../../../support/fakes/in-memory-session-store.js';
import { crashable, LoopHarness, patientClock, runChecked, StoreCrashed } from './loop-harness.js';

/** How the worker "dies" while the tool runs: the run is stopped, or the store stops accepting writes. */
type CrashMode = 'abort' | 'store';

/**
 * A tool during whose first execution the worker dies: its run signal is aborted for shutdown (the
 * execution never ends), or its store refuses every further write (the execution ends, but its result
 * can no longer be recorded). Later executions succeed.
 */
function chargeTool(policy: InDoubtPolicy, crash: () => unknown, store: InMemorySessionStore) {
  const contexts: ToolContext[] = [];
  /** The ledger as the re-run saw it: its `started` row is committed before execute is called. */
  const ledgerAtRerun: ToolCallRecord[] = [];
  const tool = {
    name: 'charge',
    description: 'Charge a card',
    parameters: { type: 'object', properties: { cents: { type: 'number' } }, required: ['cents'] },
    policy,
    execute: (args: { cents: number }, ctx: ToolContext) => {
      contexts.push(ctx);
      if (contexts.length === 1) return crash();
      return store.loadOpenToolCalls('s1').then((rows) => {
        ledgerAtRerun.push(...rows);
        return `charged ${args.cents}`;
      });
    },
  };
  return { tool, contexts, ledgerAtRerun };
}

async function crashMidTool(policy: InDoubtPolicy, mode: CrashMode) {
  const store = new InMemorySessionStore();
  const worker = crashable(store);
  const controller = new AbortController();
  const crash = (): unknown => {
    if (mode === 'store') {
      worker.crashAfter(0);
      return 'charged 500';
    }
    controller.abort(new CancelledError('shutdown'));
    return new Promise<never>(() => undefined);
  };
  const { tool, contexts, ledgerAtRerun } = chargeTool(policy, crash, store);
  const first = new LoopHarness({ llm: new ScriptedLlm([{ toolCalls: [{ id: 'pay1', name: 'charge', arguments: { cents: 500 } }] }]), tools: [tool], store: worker, clock: patientClock });
  await first.send('pay the invoice');
  const run = first.runNext(mode === 'abort' ? controller.signal : undefined);
  if (mode === 'abort') await expect(run).rejects.toBeInstanceOf(CancelledError);
  else await expect(run).rejects.toBeInstanceOf(StoreCrashed);
  // What the dead worker left: no end announced, the input running, the call started and never ended.
  expect(first.sink.ofType('session_ended')).toEqual([]);
  expect(await store.getInput('s1', 1)).toMatchObject({ status: 'running' });
  expect(await store.loadOpenToolCalls('s1')).toMatchObject([{ toolCallId: 'pay1', status: 'started', attempts: 1 }]);
  expect((await store.getSession('s1'))!.pending).toMatchObject({ unresolvedIds: ['pay1'] });

  const llm = new ScriptedLlm([{ text: 'Payment handled.' }]);
  const second = new LoopHarness({ llm, tools: [tool], store, clock: patientClock });
  const result = await runChecked(second);
  const history = await second.history();
  expect(protocolViolations(history)).toEqual([]);
  expect(second.sink.ofType('session_started')).toEqual([{ type: 'session_started', resumed: true }]);
  expect(second.sink.ofType('session_ended')).toHaveLength(1);
  expect(await store.getInput('s1', 1)).toMatchObject({ status: 'done', attempts: 2 });
  return { store, contexts, ledgerAtRerun, llm, result: result!, history, second };
}

describe('in-doubt tool calls after a crash (I5)', () => {
  it.each<CrashMode>(['abort', 'store'])('policy retry re-runs the call with the same idempotency key (crash: %s)', async (mode) => {
    const { store, contexts, ledgerAtRerun, llm, result, history, second } = await crashMidTool('retry', mode);
    expect(result).toMatchObject({ status: 'completed', finalText: 'Payment handled.' });
    expect(contexts).toHaveLength(2);
    expect(contexts[1]!.idempotencyKey).toBe(contexts[0]!.idempotencyKey);
    expect(contexts[0]!.idempotencyKey).toBe('s1:pay1');
    expect(second.sink.ofType('tool_call_in_doubt')).toEqual([{ type: 'tool_call_in_doubt', name: 'charge', toolCallId: 'pay1', policy: 'retry' }]);
    expect(history[2]).toEqual({ role: 'tool', toolCallId: 'pay1', name: 'charge', content: 'charged 500' });
    expect(llm.requests[0]!.messages.at(-1)).toMatchObject({ role: 'tool', content: 'charged 500' });
    expect(await store.loadOpenToolCalls('s1')).toEqual([]);
    // The re-run was recorded before it ran, as a second attempt of the same call.
    expect(ledgerAtRerun).toMatchObject([{ toolCallId: 'pay1', status: 'started', attempts: 2, idempotencyKey: 's1:pay1' }]);
    expect(second.sink.ofType('tool_call_completed')).toMatchObject([{ toolCallId: 'pay1', failed: false }]);
  });

  it.each<CrashMode>(['abort', 'store'])('policy fail tells the model the outcome is unknown and does not re-run (crash: %s)', async (mode) => {
    const { store, contexts, llm, result, history, second } = await crashMidTool('fail', mode);
    expect(result).toMatchObject({ status: 'completed', finalText: 'Payment handled.' });
    expect(contexts).toHaveLength(1);
    expect(second.sink.ofType('tool_call_in_doubt')).toEqual([{ type: 'tool_call_in_doubt', name: 'charge', toolCallId: 'pay1', policy: 'fail' }]);
    expect(second.sink.ofType('tool_call_started')).toEqual([]);
    expect(history[2]).toMatchObject({ role: 'tool', toolCallId: 'pay1', isError: true });
    expect(String(history[2]!.content)).toContain('outcome is unknown');
    expect(String(llm.requests[0]!.messages.at(-1)!.content)).toContain('outcome is unknown');
    // The in-doubt call is resolved (the model was told): its ledger row is closed, not open forever.
    expect(await store.loadOpenToolCalls('s1')).toEqual([]);
    expect((await store.getSession('s1'))!.pending).toBeNull();
  });
});
