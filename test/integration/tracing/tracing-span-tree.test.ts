/**
 * The span tree of one input, through a real worker (real Postgres and Redis, the OpenAI SDK against
 * the fake server) into an in-memory exporter: the producer's `send` span, the input's span under it
 * (its context stored with the input), a span per round under that, and the model and tool calls
 * under their round, with the GenAI attributes, the token counts, and a failed tool as an error status;
 * and the input of a raw job continuing the span its `traceparent` names.
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool, ToolRegistry } from '../../../src/core/tools/index.js';
import { startTracing, type Tracing } from '../../../src/observability/tracing/start-tracing.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { FakeOpenAiServer, textStream, toolCallEvents, usageBody } from '../../support/fake-openai-server.js';
import { FleetFixture } from '../../support/fleet-fixture.js';

const tools = ToolRegistry.from([
  defineTool<{ q: string }>({
    name: 'lookup',
    description: 'Looks something up.',
    parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    execute: (args) => {
      if (args.q === 'boom') throw new Error('lookup failed');
      return `result for ${args.q}`;
    },
  }),
]);

describe('the span tree of an input', () => {
  const server = new FakeOpenAiServer();
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing;
  let fleet: FleetFixture;
  let queue: SessionQueue;
  let spans: ReadableSpan[];
  const sessionId = 'traced-session';
  const RAW_SESSION = 'traced-raw';
  const RAW_PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

  beforeAll(async () => {
    await server.start();
    tracing = await startTracing({}, { serviceName: 'loopfleet-test', exporter });
    fleet = await FleetFixture.create('tracing', { LLM_PROVIDER: 'openai', OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.url, LLM_MODEL: 'gpt-test' });
    await fleet.startWorker({ tools, tracing });
    server.enqueue(
      {
        kind: 'stream',
        events: toolCallEvents([
          { id: 'call_ok', name: 'lookup', arguments: '{"q":"tides"}' },
          { id: 'call_boom', name: 'lookup', arguments: '{"q":"boom"}' },
        ]),
        usage: usageBody({ prompt: 120, completion: 30 }),
      },
      textStream(['Low tide at noon.'], { usage: usageBody({ prompt: 180, completion: 7 }) }),
      textStream(['Raw answer.'], { usage: usageBody({ prompt: 10, completion: 2 }) }),
    );
    queue = new SessionQueue({ databaseUrl: fleet.config.databaseUrl, redisUrl: fleet.config.redisUrl, queueName: fleet.config.queueName });
    const handle = await queue.add('send', { sessionId, input: 'When is low tide?' });
    const outcome = await handle.result({ timeoutMs: 30_000 });
    expect(outcome.status).toBe('completed');
    // The raw path: a BullMQ job of any client, its span's context in `traceparent`.
    await fleet.queue.add('send', { sessionId: RAW_SESSION, input: 'raw', traceparent: RAW_PARENT, tracestate: 'vendor=1' }, { jobId: 'traced-raw-1' });
    await fleet.waitForSessionIdle(RAW_SESSION, 1);
    await tracing.flush();
    spans = exporter.getFinishedSpans();
  });

  afterAll(async () => {
    await queue?.close();
    await fleet?.close();
    await tracing?.shutdown();
    await server.close();
  });

  const named = (prefix: string) => spans.filter((span) => span.name.startsWith(prefix));
  const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
  const byRound = (span: ReadableSpan) => span.attributes['loopfleet.round.index'] as number;

  it('continues the producer span in the input span, stored with the input', async () => {
    const [producer] = named(`send ${fleet.config.queueName}`);
    const [input] = named('invoke_agent ').filter((span) => span.attributes['loopfleet.session.id'] === sessionId);
    expect(producer?.kind).toBe(SpanKind.PRODUCER);
    expect(input?.kind).toBe(SpanKind.CONSUMER);
    expect(input!.spanContext().traceId).toBe(producer!.spanContext().traceId);
    expect(parentOf(input!)).toBe(producer!.spanContext().spanId);
    expect(input!.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'loopfleet.session.id': sessionId, 'loopfleet.input.seq': 1, 'loopfleet.input.status': 'completed', 'loopfleet.input.rounds': 2 });
    const [stored] = await fleet.store.listInputs(sessionId, { limit: 1 });
    expect(stored!.traceContext?.traceparent).toBe(`00-${producer!.spanContext().traceId}-${producer!.spanContext().spanId}-01`);
  });

  it('opens a span per round under the input span, and the model call of each under its round', () => {
    const [input] = named('invoke_agent ').filter((span) => span.attributes['loopfleet.session.id'] === sessionId);
    const rounds = named('loopfleet.round').filter((span) => span.attributes['loopfleet.session.id'] === sessionId).sort((a, b) => byRound(a) - byRound(b));
    expect(rounds.map(byRound)).toEqual([0, 1]);
    for (const round of rounds) expect(parentOf(round)).toBe(input!.spanContext().spanId);
    const calls = named('chat ').filter((span) => rounds.some((round) => round.spanContext().spanId === parentOf(span)));
    expect(calls).toHaveLength(2);
    const roundOf = (span: ReadableSpan) => rounds.findIndex((round) => round.spanContext().spanId === parentOf(span));
    const [first, second] = [...calls].sort((a, b) => roundOf(a) - roundOf(b));
    expect(roundOf(first!)).toBe(0);
    expect(roundOf(second!)).toBe(1);
    expect(first!.kind).toBe(SpanKind.CLIENT);
    expect(first!.name).toBe('chat gpt-test');
    expect(first!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'gpt-test',
      'gen_ai.response.model': 'gpt-test',
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 30,
      'gen_ai.response.finish_reasons': ['tool_calls'],
    });
    expect(second!.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 180, 'gen_ai.usage.output_tokens': 7, 'gen_ai.response.finish_reasons': ['stop'] });
  });

  it('opens a span per tool call under the first round; the failed call carries an error status', () => {
    const [firstRound] = named('loopfleet.round').filter((round) => byRound(round) === 0 && round.attributes['loopfleet.session.id'] === sessionId);
    const calls = named('execute_tool ');
    expect(calls.map((span) => span.attributes['gen_ai.tool.call.id']).sort()).toEqual(['call_boom', 'call_ok']);
    for (const call of calls) {
      expect(parentOf(call)).toBe(firstRound!.spanContext().spanId);
      expect(call.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup' });
    }
    const ok = calls.find((span) => span.attributes['gen_ai.tool.call.id'] === 'call_ok')!;
    const boom = calls.find((span) => span.attributes['gen_ai.tool.call.id'] === 'call_boom')!;
    expect(ok.status.code).toBe(SpanStatusCode.UNSET);
    expect(boom.status.code).toBe(SpanStatusCode.ERROR);
    expect(boom.attributes['error.type']).toEqual(expect.any(String));
  });

  it('continues the span a raw job names in traceparent', () => {
    const input = named('invoke_agent ').find((span) => span.attributes['loopfleet.session.id'] === RAW_SESSION)!;
    expect(input.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(parentOf(input)).toBe('b7ad6b7169203331');
    expect(input.spanContext().traceState?.get('vendor')).toBe('1');
  });

  it('records BullMQ’s own spans for the worker’s jobs', () => {
    expect(spans.some((span) => span.instrumentationScope.name === 'bullmq')).toBe(true);
  });
});
