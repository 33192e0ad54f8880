import { randomUUID } from 'node:crypto';
import { InputInvalidError, InputTooLargeError } from '../../core/errors/index.js';
import type { AcceptInputParams } from '../../core/ports/session-store.js';
import { INPUT_KINDS, INPUT_MODES, type InputKind, type InputMode } from '../../core/session-types.js';
import { assertNewSessionId } from '../../fleet/session-id.js';
import { optionalAgentName } from '../../fleet/agent-name.js';
import { optionalQueueName } from '../../fleet/queue-name.js';
import { optionalTenant } from '../../fleet/tenant-name.js';
import { isPlainObject } from '../postgres/arguments.js';
import { INPUT_ID_PATTERN, MAX_ORIGIN_JOB_ID_LENGTH } from '../../fleet/input-id.js';
import { toJsonText } from '../../core/json-text.js';
import { parseTraceContext } from '../../core/ports/tracing.js';

/** An accept request after validation, ready for the database. */
export interface ValidatedAccept {
  sessionId: string;
  inputId: string;
  kind: InputKind;
  mode: InputMode;
  /** The payload as JSON text, exactly what is stored. */
  payloadText: string;
  originJobId: string | null;
  /** The producer's span, as stored JSON text, or null when none (or a malformed one) came. */
  traceContextText: string | null;
  /** The agent the input names; null when it names none (any session takes it). */
  agent: string | null;
  /** The tenant the input names; null when it names none (any session takes it). */
  tenant: string | null;
  /** The queue the input is added on; null when it names none (any session takes it). */
  queue: string | null;
}

/**
 * Checks everything about an input before any database work (I8): a bad input fails with a
 * typed error and writes nothing — not even the session it would have created.
 */
export function validateAcceptInput(params: AcceptInputParams): ValidatedAccept {
  const sessionId = assertNewSessionId(params.sessionId);
  const kind = oneOf(params.kind, INPUT_KINDS, 'kind');
  const mode = params.mode === undefined ? 'queue' : oneOf(params.mode, INPUT_MODES, 'mode');
  const inputId = params.inputId === undefined ? randomUUID() : checkInputId(params.inputId);
  if (!isPlainObject(params.payload)) {
    throw new InputInvalidError('payload must be a JSON object', { details: { sessionId, inputId } });
  }
  const payloadText = toJsonText(params.payload, 'payload');
  checkSize(payloadText, params.maxBytes, sessionId, inputId);
  const agent = optionalAgentName(params.agent) ?? null;
  const tenant = optionalTenant(params.tenant) ?? null;
  const queue = optionalQueueName(params.queue);
  const trace = params.traceContext == null ? null : parseTraceContext(params.traceContext.traceparent, params.traceContext.tracestate);
  const traceContextText = trace === null ? null : JSON.stringify(trace);
  return { sessionId, inputId, kind, mode, payloadText, originJobId: checkOriginJobId(params.originJobId), traceContextText, agent, tenant, queue };
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], what: string): T {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new InputInvalidError(`${what} must be one of ${allowed.join(', ')}`, { details: { received: String(value) } });
}

function checkInputId(value: unknown): string {
  if (typeof value === 'string' && INPUT_ID_PATTERN.test(value)) return value;
  throw new InputInvalidError('inputId must be 1 to 200 characters of letters, digits, "_", ".", ":", "@", "/" or "-"', {
    details: { received: String(value).slice(0, 64) },
  });
}

function checkSize(payloadText: string, maxBytes: unknown, sessionId: string, inputId: string): void {
  if (typeof maxBytes !== 'number' || !Number.isSafeInteger(maxBytes) || maxBytes <= 0) {
    throw new InputInvalidError('maxBytes must be a positive integer');
  }
  const bytes = Buffer.byteLength(payloadText, 'utf8');
  if (bytes > maxBytes) {
    throw new InputTooLargeError(`payload is ${bytes} bytes, more than the limit of ${maxBytes}`, {
      details: { sessionId, inputId, bytes, maxBytes },
    });
  }
}

function checkOriginJobId(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string' && value.length > 0 && value.length <= MAX_ORIGIN_JOB_ID_LENGTH) return value;
  throw new InputInvalidError(`originJobId must be a string of 1 to ${MAX_ORIGIN_JOB_ID_LENGTH} characters`);
}
