/**
 * Writes one scripted response the way OpenAI's Chat Completions endpoint does: SSE framing
 * (`data: <json>\n\n`), a role chunk first, the scripted deltas, a closing chunk with the finish
 * reason and an empty delta, the usage chunk (`choices: []`) when the request asked for
 * `stream_options.include_usage`, then `data: [DONE]`.
 */
import type { ServerResponse } from 'node:http';
import type { ErrorScript, StreamEvent, StreamScript } from './script.js';
import { usageBody } from './script.js';

/** What a response needs from the request and the server. */
export interface ResponseContext {
  /** Sent as `x-request-id`. */
  requestId: string;
  /** The `id` of every chunk (`chatcmpl-…`). */
  completionId: string;
  /** The requested model. */
  model: string;
  includeUsage: boolean;
  /** A wait the server cuts short when it closes. */
  delay(ms: number): Promise<void>;
}

const CREATED = 1_700_000_000;

export function writeError(res: ServerResponse, script: ErrorScript, ctx: ResponseContext): void {
  const body = JSON.stringify({ error: script.error });
  res.writeHead(script.status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'x-request-id': ctx.requestId,
    ...script.headers,
  });
  if (script.stallBody === true) res.write(body.slice(0, body.length >> 1));
  else res.end(body);
}

export async function writeStream(res: ServerResponse, script: StreamScript, ctx: ResponseContext): Promise<void> {
  if (script.headersDelayMs !== undefined) await ctx.delay(script.headersDelayMs);
  if (res.destroyed) return;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-request-id': ctx.requestId,
    ...script.headers,
  });
  res.flushHeaders();
  if (script.holdFirstChunk !== undefined) await script.holdFirstChunk;
  if (res.destroyed) return;
  const model = script.model ?? ctx.model;
  const chunk = (choices: unknown[], usage: unknown = null) => sse(JSON.stringify(chunkObject(ctx, model, choices, usage)));
  res.write(chunk([choice({ role: 'assistant', content: '', refusal: null })]));
  const cut = script.cut;
  const events = cut === undefined ? script.events : script.events.slice(0, cut.afterEvents);
  for (const event of events) res.write('raw' in event ? sse(event.raw) : chunk([choice(event.delta, event.finishReason ?? null)]));
  if (cut !== undefined) return finishCut(res, cut.how);
  const finishReason = script.finishReason === undefined ? defaultFinishReason(script.events) : script.finishReason;
  if (finishReason !== null) res.write(chunk([choice({}, finishReason)]));
  const usage = script.usage === undefined ? usageBody({ prompt: 12, completion: Math.max(1, script.events.length) }) : script.usage;
  if (ctx.includeUsage && usage !== null) res.write(chunk([], usage));
  res.end(sse('[DONE]'));
}

/** Ends a cut stream once everything before the cut has reached the socket. */
function finishCut(res: ServerResponse, how: 'destroy' | 'end' | 'hang'): void {
  if (how === 'hang') return;
  if (how === 'end') {
    res.end();
    return;
  }
  // Flush what was written, then drop the connection without ending the chunked body.
  res.write(': cut\n\n', () => res.socket?.destroy());
}

function chunkObject(ctx: ResponseContext, model: string, choices: unknown[], usage: unknown): Record<string, unknown> {
  return {
    id: ctx.completionId,
    object: 'chat.completion.chunk',
    created: CREATED,
    model,
    service_tier: 'default',
    system_fingerprint: 'fp_fake0001',
    choices,
    ...(ctx.includeUsage ? { usage } : {}),
    // OpenAI pads chunks with a random `obfuscation` field; clients must ignore fields they don't know.
    obfuscation: 'aB3x',
  };
}

function choice(delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> {
  return { index: 0, delta, logprobs: null, finish_reason: finishReason };
}

function defaultFinishReason(events: readonly StreamEvent[]): string {
  return events.some((event) => 'delta' in event && event.delta.tool_calls !== undefined) ? 'tool_calls' : 'stop';
}

function sse(data: string): string {
  return `data: ${data}\n\n`;
}
