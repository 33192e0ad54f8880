/**
 * Is a failed LLM call worth another attempt? Only what is classified retryable (docs/llm-providers.md).
 *
 * The adapters throw what the SDKs throw, or typed loopfleet errors; this reads both without importing
 * any SDK (src/core is pure), by duck typing the fields the SDKs and Node's network stack set.
 */
import { CancelledError, LoopfleetError } from '../errors/index.js';

/** Why an error was classified the way it was; for logs, metrics and tests. */
export type LlmErrorReason = 'cancelled' | 'typed' | 'http_status' | 'connection' | 'unknown';

/** The verdict on one failure. */
export interface LlmErrorClassification {
  retryable: boolean;
  reason: LlmErrorReason;
  /** The HTTP status found on the error, if any. */
  status: number | null;
}

/** Statuses that say "try again later" rather than "this request is wrong". */
const RETRYABLE_STATUSES = new Set([408, 409, 429]);

/** Whether an error status (3xx and up) is worth another attempt: 408, 409, 429 and every 5xx. */
export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status) || status >= 500;
}

/** Node, undici and fetch network failure codes: the request may never have reached the provider. */
const CONNECTION_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** Error class names the SDKs use for connection failures and timeouts. */
const CONNECTION_NAMES = new Set(['APIConnectionError', 'APIConnectionTimeoutError', 'TimeoutError', 'ConnectTimeoutError', 'SocketError']);

/** Causes are followed this deep: `fetch failed` hides the socket error one or two levels down. */
const MAX_CAUSE_DEPTH = 5;

/**
 * Classifies a failure, first rule that applies:
 * 1. `CancelledError` → never retried (someone asked us to stop);
 * 2. a loopfleet error → its own `retryable` (the adapter already classified it);
 * 3. an HTTP status (`status`, `statusCode`, `response.status`): 408, 409, 429 and ≥ 500 are
 *    retryable, any other 4xx is not (a 401, 402 or 404 answers the same way every time),
 *    nor is a 3xx (redirects are not followed: a wrong base URL);
 * 4. a connection failure (by code or class name, also found on a `cause`) → retryable;
 * 5. anything else → retryable: an error we cannot read must not strand a session, and the policy's
 *    attempt limit and deadline still bound it.
 */
export function classifyLlmError(error: unknown): LlmErrorClassification {
  if (error instanceof CancelledError) return { retryable: false, reason: 'cancelled', status: null };
  if (error instanceof LoopfleetError) return { retryable: error.retryable, reason: 'typed', status: httpStatusOf(error) };
  const status = httpStatusOf(error);
  // A redirect (3xx) is not followed (`node-http-fetch.ts`): a wrong base URL, which retrying cannot fix.
  if (status !== null && status >= 300) {
    return { retryable: isRetryableStatus(status), reason: 'http_status', status };
  }
  if (isConnectionError(error)) return { retryable: true, reason: 'connection', status };
  return { retryable: true, reason: 'unknown', status };
}

/** The HTTP status an error carries (`status`, `statusCode`, `response.status`), or null. */
export function httpStatusOf(error: unknown): number | null {
  if (!isObject(error)) return null;
  const response = isObject(error.response) ? error.response : undefined;
  for (const candidate of [error.status, error.statusCode, response?.status, response?.statusCode]) {
    const status = asStatus(candidate);
    if (status !== null) return status;
  }
  return null;
}

function asStatus(value: unknown): number | null {
  const number = typeof value === 'string' && /^\d{3}$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && Number.isInteger(number) && number >= 100 && number <= 599 ? number : null;
}

function isConnectionError(error: unknown): boolean {
  const seen = new Set<unknown>();
  let current: unknown = error;
  for (let depth = 0; depth <= MAX_CAUSE_DEPTH && isObject(current) && !seen.has(current); depth += 1) {
    seen.add(current);
    if (typeof current.code === 'string' && CONNECTION_CODES.has(current.code)) return true;
    if (typeof current.name === 'string' && CONNECTION_NAMES.has(current.name)) return true;
    // The OpenAI and Anthropic SDKs leave `name` as 'Error'; their classes are told apart by constructor.
    if (CONNECTION_NAMES.has(constructorName(current))) return true;
    current = current.cause;
  }
  return false;
}

function constructorName(value: object): string {
  const ctor = (value as { constructor?: { name?: unknown } }).constructor;
  return typeof ctor?.name === 'string' ? ctor.name : '';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
