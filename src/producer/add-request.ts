import type { InputOverrides } from '../core/agent-profile.js';
import { InputInvalidError } from '../core/errors/index.js';
import type { SendPayload } from '../core/input-payload.js';
import { assertNewSessionId } from '../fleet/session-id.js';
import { optionalAgentName } from '../fleet/agent-name.js';
import { optionalTenant } from '../fleet/tenant-name.js';
import { INPUT_MODES, type InputMode } from '../core/session-types.js';
import type { AcceptRequest } from '../fleet/accept-input.js';

/** What `SessionQueue.add` accepts as its first argument (the BullMQ job name of the raw path). */
export type AddKind = 'send' | 'resume';

/**
 * The data of an input: the same object a raw BullMQ producer puts in its job (docs/client.md).
 * `send` needs `input`; `resume` takes `submit` or `abortPending` (or neither: just continue).
 */
export interface AddData {
  sessionId: string;
  /** `send`: the user message — text, content parts, or `{ role: 'user', content, name? }`. */
  input?: SendPayload['input'];
  /** Idempotency key (1–200 of `[A-Za-z0-9_.:@/-]`); a repeated add returns the original seq. Default: random. */
  inputId?: string;
  /** How the input joins a running one: `queue`, `steer` or `interrupt`. Default `queue`. */
  mode?: InputMode;
  /** Per-input overrides: tools allowlist, system prompt, max rounds, response format, token budget. */
  options?: InputOverrides;
  /** `resume`: the answer to a `request_user_input` question. */
  submit?: { interactionId: string; value: unknown };
  /** `resume`: close every open tool call with `<aborted: reason>` and stop. */
  abortPending?: { reason: string };
  /**
   * The agent the input is for (1–64 of `[A-Za-z0-9_.-]`). A session the add creates runs on it. Refused
   * with `agent.not_found` when no worker registered it (`default` always passes), and with
   * `session.agent_mismatch` when the session runs on another agent. Absent: any session takes it.
   */
  agent?: string;
  /**
   * The tenant the input is for (1–128 of `[A-Za-z0-9_.:-]`). A session the add creates belongs to
   * it (else to `default`). Refused with `session.tenant_mismatch`, writing nothing, when the session
   * belongs to another tenant. Absent: any session takes it.
   */
  tenant?: string;
}

/** The third argument of `add`, like BullMQ's job options; may carry `inputId` and `mode` instead of `data`. */
export interface AddOptions {
  inputId?: string;
  mode?: InputMode;
}

const DATA_KEYS = new Set(['sessionId', 'input', 'inputId', 'mode', 'options', 'submit', 'abortPending', 'agent', 'tenant']);
const OPTION_KEYS = new Set(['inputId', 'mode']);
const PAYLOAD_KEYS = ['input', 'options', 'submit', 'abortPending'] as const;

/**
 * Checks an `add` call and turns it into an accept request, before anything is written (I8). Throws
 * `input.invalid` for a bad kind, shape, mode, agent or tenant name or conflicting ids and `session.invalid_id` for a bad
 * session id; the payload itself is checked against its kind's schema by `acceptAndKick`.
 */
export function toAcceptRequest(kind: unknown, data: unknown, options: unknown): AcceptRequest {
  const checkedKind = checkKind(kind);
  const fields = plainObject(data, 'data', DATA_KEYS);
  const opts = options === undefined ? {} : plainObject(options, 'options (third argument)', OPTION_KEYS);
  const sessionId = assertNewSessionId(fields.sessionId);
  const agent = optionalAgentName(fields.agent);
  const tenant = optionalTenant(fields.tenant);
  const inputId = agreeing('inputId', fields.inputId, opts.inputId);
  const mode = agreeing('mode', fields.mode, opts.mode);
  if (inputId !== undefined && typeof inputId !== 'string') throw new InputInvalidError('inputId must be a string');
  if (mode !== undefined && !(INPUT_MODES as readonly unknown[]).includes(mode)) {
    throw new InputInvalidError(`mode must be one of ${INPUT_MODES.join(', ')}`, { details: { received: String(mode) } });
  }
  const payload: Record<string, unknown> = {};
  for (const key of PAYLOAD_KEYS) if (fields[key] !== undefined) payload[key] = fields[key];
  return {
    sessionId,
    kind: checkedKind,
    payload,
    ...(inputId !== undefined ? { inputId } : {}),
    ...(mode !== undefined ? { mode: mode as InputMode } : {}),
    ...(agent !== undefined ? { agent } : {}),
    ...(tenant !== undefined ? { tenant } : {}),
  };
}

function checkKind(kind: unknown): AddKind {
  if (kind === 'send' || kind === 'resume') return kind;
  if (kind === 'timer') {
    // A timer is a timers row and a delayed job, scheduled by SessionQueue.timers; a bare inbox row would lose both.
    throw new InputInvalidError('a timer is not an input to accept: schedule it with queue.add("timer", …) or queue.timers.schedule');
  }
  throw new InputInvalidError(`unknown input kind ${JSON.stringify(String(kind))} (expected "send" or "resume")`, {
    details: { received: String(kind).slice(0, 64) },
  });
}

/** An object whose fields are all in `allowed`, else `input.invalid` naming the unknown ones. */
export function plainObject(value: unknown, what: string, allowed: Set<string>): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InputInvalidError(`${what} must be an object`);
  const unknown = Object.keys(value).filter((key) => !allowed.has(key));
  if (unknown.length > 0) {
    throw new InputInvalidError(`${what} has unknown field(s) ${unknown.join(', ')} (allowed: ${[...allowed].join(', ')})`, {
      details: { fields: unknown.slice(0, 10) },
    });
  }
  return value as Record<string, unknown>;
}

/** `inputId`/`mode` may come in `data` or in the options; both is fine only when they agree. */
function agreeing(name: string, inData: unknown, inOptions: unknown): unknown {
  if (inData !== undefined && inOptions !== undefined && inData !== inOptions) {
    throw new InputInvalidError(`${name} is given twice with different values (in data and in options)`);
  }
  // Only an absent value falls back: a null in data must reach the type check (as in the options),
  // not become a random inputId or the default mode.
  return inData !== undefined ? inData : inOptions;
}
