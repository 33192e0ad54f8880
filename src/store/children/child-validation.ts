import { InputInvalidError } from '../../core/errors/index.js';
import type { ChildResultPayload, SpawnRequest } from '../../core/ports/children.js';
import { toJsonText } from '../../core/json-text.js';
import { assertAgentName } from '../../fleet/agent-name.js';
import { INPUT_ID_PATTERN } from '../../fleet/input-id.js';
import { assertNewSessionId, assertSessionId } from '../../fleet/session-id.js';
import { assertFlag, assertLeaseToken, assertSeq, isPlainObject } from '../postgres/arguments.js';

/** The input id prefix of a child's result in its parent's inbox: `child:<toolCallId>`. */
export const CHILD_INPUT_ID_PREFIX = 'child:';

/** The input id of a child's first input, its task. */
export const SPAWN_INPUT_ID = 'spawn';

/** Most calls one parked input may wait for. */
const MAX_AWAITED = 1000;

/**
 * A tool call id that names a child result: `child:<id>` must be a valid input id (1–200 of
 * `[A-Za-z0-9_.:@/-]`), so the result can be read back by its id. `input.invalid` otherwise.
 */
export function assertToolCallId(value: unknown, what = 'toolCallId'): string {
  if (typeof value === 'string' && value.length > 0 && INPUT_ID_PATTERN.test(`${CHILD_INPUT_ID_PREFIX}${value}`)) return value;
  throw new InputInvalidError(`${what} must be 1 to ${200 - CHILD_INPUT_ID_PREFIX.length} characters of letters, digits, "_", ".", ":", "@", "/" or "-"`, {
    details: { received: typeof value === 'string' ? value.slice(0, 64) : typeof value },
  });
}

/** The calls a parked input waits for: an array of tool call ids, each once. */
export function assertAwaiting(value: unknown): string[] {
  if (!Array.isArray(value) || value.length > MAX_AWAITED) throw new InputInvalidError(`awaiting must be an array of at most ${MAX_AWAITED} tool call ids`);
  const ids = value.map((id) => assertToolCallId(id, 'awaiting[]'));
  if (new Set(ids).size !== ids.length) throw new InputInvalidError('awaiting must not name a tool call twice');
  return ids;
}

/** A spawn request after validation, ready for the database. */
export interface ValidatedSpawn {
  parentSessionId: string;
  leaseToken: number;
  inputSeq: number;
  toolCallId: string;
  childSessionId: string;
  agent: string;
  /** The child's first input's payload, `{"input": task}`, as JSON text. */
  payloadText: string;
  wait: boolean;
  rootSessionId: string;
  depth: number;
  maxChildrenPerInput: number;
}

/**
 * Checks a spawn before any database work, as an accept is checked: the child id as a new session id
 * (`session.invalid_id`), the task storable (`input.invalid`, e.g. for a NUL character), every other
 * field typed. Nothing is written for a bad one.
 */
export function validateSpawn(params: SpawnRequest): ValidatedSpawn {
  if (!isPlainObject(params)) throw new InputInvalidError('spawn parameters must be an object');
  const childSessionId = assertNewSessionId(params.childSessionId);
  if (typeof params.task !== 'string') throw new InputInvalidError('task must be a string', { details: { childSessionId } });
  if (typeof params.wait !== 'boolean') throw new InputInvalidError('wait must be a boolean', { details: { childSessionId } });
  return {
    parentSessionId: assertSessionId(params.parentSessionId),
    leaseToken: assertLeaseToken(params.leaseToken),
    inputSeq: assertSeq(params.inputSeq, 'inputSeq'),
    toolCallId: assertToolCallId(params.toolCallId),
    childSessionId,
    agent: assertAgentName(params.agent),
    payloadText: toJsonText({ input: params.task }, 'task'),
    wait: assertFlag(params.wait, 'wait'),
    rootSessionId: assertSessionId(params.rootSessionId),
    depth: assertSeq(params.depth, 'depth'),
    maxChildrenPerInput: assertSeq(params.maxChildrenPerInput, 'maxChildrenPerInput'),
  };
}

/** A child result to deliver: a JSON object whose `wait` says how it joins the parent; its JSON text. */
export function validateChildPayload(payload: ChildResultPayload): { wait: boolean; payloadText: string } {
  if (!isPlainObject(payload)) throw new InputInvalidError('child result payload must be a JSON object');
  if (typeof payload.wait !== 'boolean') throw new InputInvalidError('child result payload.wait must be a boolean');
  return { wait: payload.wait, payloadText: toJsonText(payload, 'child result payload') };
}
