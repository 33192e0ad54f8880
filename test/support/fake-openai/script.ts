/**
 * What the fake OpenAI server answers, one scripted response per request, and builders for the
 * common shapes. Shapes follow the real API: `chat.completion.chunk` deltas, tool-call fragments
 * (id and name first, argument pieces after), the usage chunk, and OpenAI's error body.
 */

/** OpenAI's error body: `{ "error": { message, type, param, code } }`. */
export interface OpenAiErrorBody {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

/** `choices[0].delta` of one chunk. */
export type ChunkDelta = Record<string, unknown>;

/**
 * One SSE event of a stream: a chunk whose `choices[0]` carries `delta` (and `finishReason`), or a
 * verbatim `data:` payload (a malformed chunk, an in-stream error event).
 */
export type StreamEvent = { delta: ChunkDelta; finishReason?: string | null } | { raw: string };

/** The usage object OpenAI sends in the last chunk. */
export interface UsageBody {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: Record<string, number>;
  completion_tokens_details?: Record<string, number>;
}

/** A streamed 200 answer. */
export interface StreamScript {
  kind: 'stream';
  events: StreamEvent[];
  /**
   * `finish_reason` of the closing chunk (empty delta); null sends no closing chunk. Default
   * `tool_calls` when an event carried tool calls, else `stop`.
   */
  finishReason?: string | null;
  /** The usage chunk, sent when the request asked for `stream_options.include_usage`; null: none. */
  usage?: UsageBody | null;
  /** The `model` of every chunk; default the requested model. */
  model?: string;
  /** Extra response headers. */
  headers?: Record<string, string>;
  /** Milliseconds before the response headers are sent (a slow endpoint). */
  headersDelayMs?: number;
  /** Sends the headers, then waits for this before the first chunk (a slow first token). */
  holdFirstChunk?: Promise<void>;
  /**
   * Stop after this many `events`: `destroy` closes the connection (a mid-stream disconnect), `end`
   * ends the response cleanly without a closing chunk or `[DONE]`, `hang` sends nothing more.
   */
  cut?: { afterEvents: number; how: 'destroy' | 'end' | 'hang' };
}

/** An HTTP error answer with OpenAI's error body. */
export interface ErrorScript {
  kind: 'error';
  status: number;
  error: OpenAiErrorBody;
  headers?: Record<string, string>;
  /** Send the headers and half the body, then nothing more: the connection stays open. */
  stallBody?: boolean;
}

/** Never answers: no headers, no body, the connection stays open until the client gives up. */
export interface HangScript {
  kind: 'hang';
}

export type FakeResponse = StreamScript | ErrorScript | HangScript;

/** A stream whose events are text deltas. */
export function textStream(parts: readonly string[], options: Omit<StreamScript, 'kind' | 'events'> = {}): StreamScript {
  return { kind: 'stream', events: textEvents(parts), ...options };
}

export function textEvents(parts: readonly string[]): StreamEvent[] {
  return parts.map((content) => ({ delta: { content } }));
}

/** Reasoning deltas as compatible endpoints send them (`reasoning_content` or `reasoning`). */
export function reasoningEvents(parts: readonly string[], field: 'reasoning_content' | 'reasoning' = 'reasoning_content'): StreamEvent[] {
  return parts.map((text) => ({ delta: { content: null, [field]: text } }));
}

/** A tool call to stream. */
export interface ScriptedToolCall {
  id: string;
  name: string;
  arguments: string;
  /** Default: the call's position. */
  index?: number;
}

/**
 * Tool calls as OpenAI streams them: per call, a first fragment with index, id, type and name and
 * empty arguments, then the arguments in `pieces` fragments carrying only the index. With
 * `interleave`, the argument fragments of all calls alternate.
 */
export function toolCallEvents(calls: readonly ScriptedToolCall[], options: { pieces?: number; interleave?: boolean } = {}): StreamEvent[] {
  const pieces = options.pieces ?? 3;
  const heads: StreamEvent[] = [];
  const bodies: StreamEvent[][] = [];
  calls.forEach((call, position) => {
    const index = call.index ?? position;
    heads.push({ delta: { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] } });
    bodies.push(split(call.arguments, pieces).map((fragment) => ({ delta: { tool_calls: [{ index, function: { arguments: fragment } }] } })));
  });
  if (options.interleave !== true) return heads.flatMap((head, position) => [head, ...(bodies[position] ?? [])]);
  const events = [...heads];
  for (let step = 0; step < pieces; step += 1) {
    for (const body of bodies) {
      const event = body[step];
      if (event !== undefined) events.push(event);
    }
  }
  return events;
}

/** A usage body; details included when given. */
export function usageBody(usage: { prompt: number; completion: number; cached?: number; reasoning?: number }): UsageBody {
  return {
    prompt_tokens: usage.prompt,
    completion_tokens: usage.completion,
    total_tokens: usage.prompt + usage.completion,
    prompt_tokens_details: { cached_tokens: usage.cached ?? 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: usage.reasoning ?? 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

/** The `type` and `code` OpenAI uses for common statuses. */
const ERROR_KINDS: Record<number, [type: string, code: string | null]> = {
  400: ['invalid_request_error', null],
  401: ['invalid_request_error', 'invalid_api_key'],
  403: ['invalid_request_error', 'unsupported_country_region_territory'],
  404: ['invalid_request_error', 'model_not_found'],
  408: ['timeout', null],
  409: ['invalid_request_error', 'conflict'],
  422: ['invalid_request_error', null],
  429: ['requests', 'rate_limit_exceeded'],
  500: ['server_error', null],
  502: ['server_error', null],
  503: ['server_error', 'overloaded'],
  504: ['server_error', null],
};

/** An error answer with OpenAI's body for `status`. */
export function errorResponse(status: number, options: { message?: string; headers?: Record<string, string>; param?: string | null; stallBody?: boolean } = {}): ErrorScript {
  const [type, code] = ERROR_KINDS[status] ?? ['api_error', null];
  return {
    kind: 'error',
    status,
    error: { message: options.message ?? `fake error ${status}`, type, param: options.param ?? null, code },
    ...(options.headers === undefined ? {} : { headers: options.headers }),
    ...(options.stallBody === undefined ? {} : { stallBody: options.stallBody }),
  };
}

function split(text: string, pieces: number): string[] {
  if (text === '') return [];
  const size = Math.max(1, Math.ceil(text.length / pieces));
  const parts: string[] = [];
  for (let start = 0; start < text.length; start += size) parts.push(text.slice(start, start + size));
  return parts;
}
