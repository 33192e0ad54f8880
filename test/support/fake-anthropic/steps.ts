/**
 * What the fake Anthropic server answers, one step per request, and helpers to write steps.
 */

/** Usage figures reported by a streamed reply (`message_start` input side, `message_delta` output). */
export interface FakeUsage {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadInputTokens?: number;
  cacheCreationInputTokens?: number;
}

/** One content block of a streamed reply. */
export type FakeBlock =
  /** A text block streamed as these `text_delta`s. */
  | { type: 'text'; chunks: string[] }
  /** A `tool_use` block whose input streams as these `input_json_delta` fragments. */
  | { type: 'tool_use'; id?: string; name: string; inputChunks: string[] }
  /** A thinking block: `thinking_delta`s, then one `signature_delta`. */
  | { type: 'thinking'; chunks: string[]; signature?: string };

/**
 * Something going wrong in a stream, after `afterFrames` frames were written (a negative number
 * counts from the end: -1 is "all but the last", i.e. no `message_stop`).
 * - `disconnect`: the socket is destroyed;
 * - `end`: the response ends cleanly, the remaining frames never sent;
 * - `hang`: nothing more is written until the client goes away or the server closes;
 * - `malformed`: a frame whose data line is not JSON, then the end;
 * - `error_event`: an `event: error` frame with Anthropic's body, then the end.
 */
export type StreamFault =
  | { kind: 'disconnect' | 'end' | 'hang' | 'malformed'; afterFrames: number }
  | { kind: 'error_event'; afterFrames: number; errorType: string; message?: string };

/**
 * A 200 streaming reply. Frame layout: `message_start`; per block `content_block_start` (a `ping`
 * follows the first one, as Anthropic sends it), its deltas, `content_block_stop`; then
 * `message_delta` and `message_stop`. For one text block of n chunks the first delta is frame 3.
 */
export interface StreamStep {
  kind: 'stream';
  blocks: FakeBlock[];
  /** Default `tool_use` when a tool block is present, else `end_turn`. */
  stopReason?: string;
  /** Default: the model the request asked for. */
  model?: string;
  usage?: FakeUsage;
  /** Wait this long after sending the headers before the first event. */
  firstEventDelayMs?: number;
  /** While waiting for the first event, send a `ping` this often (Anthropic keeps quiet streams alive so). */
  pingIntervalMs?: number;
  fault?: StreamFault;
}

/** An HTTP error with Anthropic's body `{ type: 'error', error: { type, message }, request_id }`. */
export interface ErrorStep {
  kind: 'error';
  status: number;
  /** Default: Anthropic's type for the status (see {@link defaultErrorType}). */
  errorType?: string;
  message?: string;
  /** Extra response headers, e.g. `retry-after`. */
  headers?: Record<string, string>;
  /** Send the headers and half the body, then nothing more: the connection stays open. */
  stallBody?: boolean;
}

/** No response at all until the client gives up or the server closes. */
export interface HangStep {
  kind: 'hang';
}

/** The connection is destroyed before any response (a connection error for the client). */
export interface DropStep {
  kind: 'drop';
}

/** What the server does with one request. */
export type FakeStep = StreamStep | ErrorStep | HangStep | DropStep;

/** A text reply streamed in `chunks` (a string is one chunk). */
export function textStep(chunks: string | string[], options: Omit<StreamStep, 'kind' | 'blocks'> = {}): StreamStep {
  return { kind: 'stream', blocks: [{ type: 'text', chunks: typeof chunks === 'string' ? [chunks] : chunks }], ...options };
}

/** A reply of tool calls; `input` objects are streamed in two fragments split mid-JSON. */
export function toolStep(
  calls: { id?: string; name: string; input?: Record<string, unknown>; inputChunks?: string[] }[],
  options: Omit<StreamStep, 'kind' | 'blocks'> & { text?: string } = {},
): StreamStep {
  const { text, ...rest } = options;
  const blocks: FakeBlock[] = text === undefined ? [] : [{ type: 'text', chunks: [text] }];
  for (const call of calls) {
    const json = JSON.stringify(call.input ?? {});
    const inputChunks = call.inputChunks ?? ['', json.slice(0, Math.ceil(json.length / 2)), json.slice(Math.ceil(json.length / 2))];
    blocks.push({ type: 'tool_use', ...(call.id === undefined ? {} : { id: call.id }), name: call.name, inputChunks });
  }
  return { kind: 'stream', blocks, ...rest };
}

/** An HTTP error reply. */
export function errorStep(status: number, options: Omit<ErrorStep, 'kind' | 'status'> = {}): ErrorStep {
  return { kind: 'error', status, ...options };
}

/** Anthropic's error type for an HTTP status. */
export function defaultErrorType(status: number): string {
  const types: Record<number, string> = {
    400: 'invalid_request_error',
    401: 'authentication_error',
    402: 'billing_error',
    403: 'permission_error',
    404: 'not_found_error',
    408: 'timeout_error',
    413: 'request_too_large',
    422: 'invalid_request_error',
    429: 'rate_limit_error',
    504: 'timeout_error',
    529: 'overloaded_error',
  };
  return types[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}
