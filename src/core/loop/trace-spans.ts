import type { ToolCall } from '../messages.js';
import type { LlmRequest, LlmResponse } from '../ports/llm.js';
import { NOOP_SPAN, type TraceSpan } from '../ports/tracing.js';
import type { ToolOutcome } from '../tools/index.js';
import type { LoopDeps, RunContext, RunParams } from './run-context.js';

/**
 * The run's spans (docs/tracing.md): one per input, one per round, one per model call attempt, one
 * per tool call, named and attributed after the OpenTelemetry GenAI conventions. With tracing off
 * (`deps.tracer` absent or the no-op one) every function here returns at its first line.
 */

/** The input's span: a child of the producer's span when the input carried its context. */
export function openInputSpan(deps: LoopDeps, params: RunParams): TraceSpan {
  const tracer = deps.tracer;
  if (tracer === undefined || !tracer.enabled) return NOOP_SPAN;
  const agent = deps.agent?.name ?? 'default';
  return tracer.startSpan(`invoke_agent ${agent}`, {
    kind: 'consumer',
    remote: params.input.traceContext ?? null,
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': agent,
      'gen_ai.conversation.id': params.sessionId,
      'loopfleet.session.id': params.sessionId,
      'loopfleet.input.seq': params.input.seq,
      'loopfleet.input.kind': params.input.kind,
      'loopfleet.input.resumed': params.resumed,
    },
  });
}

/**
 * Ends the input's span with how the input ended: `error` (null for none) is the error the run
 * finished the input with, or what stopped the run without finishing it (shutdown, lease lost).
 */
export function closeInputSpan(span: TraceSpan, status: string, rounds: number, error: unknown): void {
  if (span === NOOP_SPAN) return;
  span.setAttributes({ 'loopfleet.input.status': status, 'loopfleet.input.rounds': rounds });
  if (error !== null) span.recordError(error);
  span.end();
}

/**
 * The span a model or tool call goes under: the round's, or the input's for calls made outside a
 * round (a compaction's summary, the round-limit wrap-up, open calls a previous holder left).
 */
function currentSpan(ctx: RunContext): TraceSpan {
  const { round, input } = ctx.state.trace;
  return round === NOOP_SPAN ? input : round;
}

/** Opens the round's span under the input's; the model call and the tool calls of the round go under it. */
export function openRoundSpan(ctx: RunContext): void {
  const tracer = ctx.deps.tracer;
  if (tracer === undefined || !tracer.enabled) return;
  ctx.state.trace.round = tracer.startSpan('loopfleet.round', {
    parent: ctx.state.trace.input,
    attributes: { 'loopfleet.round.index': ctx.state.round, 'loopfleet.session.id': ctx.params.sessionId },
  });
}

/** Ends the round's span; `error`, when the round threw. */
export function closeRoundSpan(ctx: RunContext, error?: unknown): void {
  const span = ctx.state.trace.round;
  if (span === NOOP_SPAN) return;
  if (error !== undefined) span.recordError(error);
  span.end();
  ctx.state.trace.round = NOOP_SPAN;
}

/** One model call attempt's span (`chat <model>`), under the round's (or the input's, outside a round). */
export function openLlmSpan(ctx: RunContext, request: LlmRequest, model: string, attempt: number): TraceSpan {
  const tracer = ctx.deps.tracer;
  if (tracer === undefined || !tracer.enabled) return NOOP_SPAN;
  const provider = ctx.deps.llm.provider;
  return tracer.startSpan(`chat ${model}`, {
    kind: 'client',
    parent: currentSpan(ctx),
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': provider,
      'gen_ai.system': provider,
      'gen_ai.request.model': model,
      'gen_ai.request.max_tokens': request.maxTokens ?? undefined,
      'gen_ai.request.temperature': request.temperature ?? undefined,
      'loopfleet.llm.attempt': attempt,
    },
  });
}

/** Ends a model call's span with the reply's model, usage and finish reason, or with the error it failed with. */
export function closeLlmSpan(span: TraceSpan, response: LlmResponse | null, error?: unknown): void {
  if (span === NOOP_SPAN) return;
  if (response !== null) {
    span.setAttributes({
      'gen_ai.response.model': response.model,
      'gen_ai.provider.name': response.provider,
      'gen_ai.usage.input_tokens': response.usage.promptTokens,
      'gen_ai.usage.output_tokens': response.usage.completionTokens,
      'gen_ai.usage.cache_read.input_tokens': response.usage.cachedTokens,
      'gen_ai.response.finish_reasons': [response.rawFinishReason ?? response.finishReason],
      'loopfleet.llm.finish_reason': response.finishReason,
      'loopfleet.llm.tool_calls': response.toolCalls.length,
    });
  } else {
    span.recordError(error);
  }
  span.end();
}

/** The spans of a batch of tool calls: one per call, from its start to its outcome, under the round's span (or the input's). */
export interface ToolSpans {
  start(call: ToolCall): void;
  finish(outcome: ToolOutcome): void;
  /** Ends the spans of calls that never finished (the batch stopped or failed). */
  endOpen(): void;
}

/** {@link ToolSpans} of a run; null with tracing off, so the batch keeps its own callbacks. */
export function toolSpans(ctx: RunContext): ToolSpans | null {
  const tracer = ctx.deps.tracer;
  if (tracer === undefined || !tracer.enabled) return null;
  const open = new Map<string, TraceSpan>();
  const parent = currentSpan(ctx);
  return {
    start: (call) => {
      const span = tracer.startSpan(`execute_tool ${call.name}`, {
        parent,
        attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': call.name, 'gen_ai.tool.call.id': call.id, 'gen_ai.tool.type': 'function' },
      });
      open.set(call.id, span);
    },
    finish: (outcome) => {
      const span = open.get(outcome.toolCallId);
      if (span === undefined) return;
      open.delete(outcome.toolCallId);
      span.setAttributes({ 'loopfleet.tool.duration_ms': outcome.durationMs });
      // The code only: the failed result's text is what the tool wrote, and spans carry no contents.
      const code = outcome.errorCode ?? 'tool.failed';
      if (outcome.failed) span.recordError({ code, message: code });
      span.end();
    },
    endOpen: () => {
      for (const span of open.values()) {
        span.setAttributes({ 'loopfleet.tool.unfinished': true });
        span.end();
      }
      open.clear();
    },
  };
}
