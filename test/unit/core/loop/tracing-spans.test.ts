/**
 * The loop's spans through the tracing port, on the in-memory store and the scripted model, with a
 * tracer that records what it is asked (no OpenTelemetry): which spans open under which, what they
 * carry, that errors become their status, and that every span opened is ended, whatever ends the run.
 */
import { describe, expect, it } from 'vitest';
import { LlmNonRetryableError, LlmTransientError } from '../../../../src/core/errors/index.js';
import type { StartSpanOptions, TraceAttributes, Tracer, TraceSpan } from '../../../../src/core/ports/tracing.js';
import { ScriptedLlm } from '../../../../src/llm/scripted-llm.js';
import { echoTool, LoopHarness } from './loop-harness.js';

interface RecordedSpan extends TraceSpan {
  name: string;
  parent: RecordedSpan | null;
  remote: string | null;
  attributes: Record<string, unknown>;
  errors: unknown[];
  ended: number;
}

/** A tracer that keeps every span it opened. */
class RecordingTracer implements Tracer {
  readonly enabled = true;
  readonly spans: RecordedSpan[] = [];

  startSpan(name: string, options: StartSpanOptions = {}): TraceSpan {
    const span: RecordedSpan = {
      name,
      parent: (options.parent as RecordedSpan | null | undefined) ?? null,
      remote: options.remote?.traceparent ?? null,
      attributes: Object.assign({}, options.attributes),
      errors: [],
      ended: 0,
      setAttributes: (attributes: TraceAttributes) => void Object.assign(span.attributes, attributes),
      recordError: (error: unknown) => void span.errors.push(error),
      end: () => void (span.ended += 1),
    };
    this.spans.push(span);
    return span;
  }

  named(prefix: string): RecordedSpan[] {
    return this.spans.filter((span) => span.name.startsWith(prefix));
  }
}

function tracedHarness(llm: ScriptedLlm): { harness: LoopHarness; tracer: RecordingTracer } {
  const harness = new LoopHarness({ llm, tools: [echoTool] });
  const tracer = new RecordingTracer();
  harness.deps.tracer = tracer;
  return { harness, tracer };
}

describe('the loop’s spans', () => {
  it('opens input → rounds → model and tool calls, with the GenAI attributes, and ends each once', async () => {
    const llm = new ScriptedLlm([{ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'x' } }], usage: { promptTokens: 11, completionTokens: 3 } }, { text: 'done' }]);
    const { harness, tracer } = tracedHarness(llm);
    await harness.send('go');
    expect(await harness.runNext()).toMatchObject({ status: 'completed', rounds: 2 });

    const [input] = tracer.named('invoke_agent ');
    expect(input).toMatchObject({ parent: null, remote: null, attributes: { 'loopfleet.session.id': 's1', 'loopfleet.input.seq': 1, 'loopfleet.input.status': 'completed', 'loopfleet.input.rounds': 2 } });
    const rounds = tracer.named('loopfleet.round');
    expect(rounds.map((round) => [round.parent, round.attributes['loopfleet.round.index']])).toEqual([
      [input, 0],
      [input, 1],
    ]);
    const calls = tracer.named('chat ');
    expect(calls.map((call) => call.parent)).toEqual(rounds);
    expect(calls[0]!.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'scripted', 'gen_ai.usage.input_tokens': 11, 'gen_ai.usage.output_tokens': 3, 'gen_ai.response.finish_reasons': ['tool_calls'] });
    const [tool] = tracer.named('execute_tool ');
    expect(tool).toMatchObject({ name: 'execute_tool echo', parent: rounds[0], errors: [], attributes: { 'gen_ai.tool.name': 'echo', 'gen_ai.tool.call.id': 'c1' } });
    expect(tracer.spans.map((span) => span.ended)).toEqual(tracer.spans.map(() => 1));
    expect(tracer.spans.every((span) => span.errors.length === 0)).toBe(true);
  });

  it('puts a model call made outside a round (the round-limit wrap-up) under the input span', async () => {
    const llm = new ScriptedLlm([{ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'x' } }] }, { text: 'summary' }]);
    const harness = new LoopHarness({ llm, tools: [echoTool], profile: { maxRounds: 1 } });
    const tracer = new RecordingTracer();
    harness.deps.tracer = tracer;
    await harness.send('go');
    expect((await harness.runNext())?.status).toBe('hit_round_limit');
    const [input] = tracer.named('invoke_agent ');
    const [round] = tracer.named('loopfleet.round');
    expect(tracer.named('chat ').map((call) => call.parent)).toEqual([round, input]);
    expect(tracer.spans.map((span) => span.ended)).toEqual(tracer.spans.map(() => 1));
  });

  it('records a failed attempt on its span, and a degraded call’s failure on the input span', async () => {
    const llm = new ScriptedLlm([{ error: new LlmTransientError('503 from the provider') }, { error: new LlmNonRetryableError('401 from the provider') }]);
    const { harness, tracer } = tracedHarness(llm);
    await harness.send('go');
    const result = await harness.runNext();
    expect(result?.status).toBe('degraded');
    const calls = tracer.named('chat ');
    expect(calls.map((call) => [call.attributes['loopfleet.llm.attempt'], (call.errors[0] as { code?: string }).code])).toEqual([
      [1, 'llm.transient'],
      [2, 'llm.non_retryable'],
    ]);
    const [input] = tracer.named('invoke_agent ');
    expect(input!.attributes['loopfleet.input.status']).toBe('degraded');
    expect(input!.errors).toHaveLength(1);
    expect(tracer.spans.map((span) => span.ended)).toEqual(tracer.spans.map(() => 1));
  });

  it('continues the trace context stored with the input', async () => {
    const { harness, tracer } = tracedHarness(new ScriptedLlm([{ text: 'hi' }]));
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await harness.store.acceptInput({ sessionId: 's1', kind: 'send', payload: { input: 'go' }, maxBytes: 1 << 20, traceContext: { traceparent } });
    await harness.runNext();
    expect(tracer.named('invoke_agent ')[0]!.remote).toBe(traceparent);
  });

  it('ends the input span with the error when the run stops without finishing its input', async () => {
    const { harness, tracer } = tracedHarness(new ScriptedLlm([{ text: 'never', delayMs: 60_000 }]));
    await harness.send('go');
    const controller = new AbortController();
    const run = harness.runNext(controller.signal);
    await expect.poll(() => tracer.named('chat ').length).toBe(1);
    controller.abort(new Error('shutting down'));
    await expect(run).rejects.toThrow();
    const [input] = tracer.named('invoke_agent ');
    expect(input!.attributes['loopfleet.input.status']).toBe('stopped');
    expect(input!.errors).toHaveLength(1);
    expect(tracer.spans.map((span) => span.ended)).toEqual(tracer.spans.map(() => 1));
  });
});
