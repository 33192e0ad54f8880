/**
 * The fast path of step validation (`validateStep`): the steps a run commits on every input — user
 * message, assistant reply with its tool calls, tool results, ledger and usage rows, pending state,
 * the input's end — checked in place, without the copies a schema parse makes. It accepts a step only
 * when the schema in `commit-step-schema.ts` would accept it and return the same value; anything
 * else (an invalid step, an unknown key the parse would strip, a default it would fill in, a rare part:
 * compaction, steering, a question for a human) returns undefined, and the schema decides and reports.
 * `test/unit/store/commit-step-validation.test.ts` holds the two to that agreement on generated steps.
 *
 * It exists because the schema parse was ≈ 10 % of a worker's CPU per input with the garbage it left
 * (bench/history/log-to-session-30.md, item 33). The schema stays the definition. A change that loosens it only sends more steps
 * to it (slower, still right); a change that tightens it must be made here too, or this path would let
 * through what the schema now refuses — the property test fails once its generated steps reach the
 * new rule, so extend its generators with the rule.
 *
 * A step vouched for is written as it is, not as a copy: its values are read again when it is
 * serialised. Steps are plain data the loop builds (plain objects and arrays, read-only once built);
 * one whose properties compute a different value on each read (accessors, proxies) would be written
 * with whatever the second read gives.
 */
import { MESSAGE_KINDS } from '../../core/messages.js';
import type { StepCommit } from '../../core/ports/session-store.js';
import { RUN_OUTCOMES, TERMINAL_INPUT_STATUSES, TOOL_CALL_STATUSES } from '../../core/session-types.js';
import { INT4_MAX, TOOL_CALL_ID_MAX } from './commit-step-limits.js';
import type { ValidatedStep } from './commit-step-schema.js';

type Fields = Record<string, unknown>;

const keys = (...names: string[]): ReadonlySet<string> => new Set(names);

const STEP_KEYS = keys('sessionId', 'leaseToken', 'messages', 'pending', 'toolCalls', 'usageRounds', 'compaction', 'steer', 'input');
const STEP_MESSAGE_KEYS = keys('inputSeq', 'round', 'kind', 'message');
const SYSTEM_KEYS = keys('role', 'content');
const USER_KEYS = keys('role', 'content', 'name');
const ASSISTANT_KEYS = keys('role', 'content', 'toolCalls');
const TOOL_KEYS = keys('role', 'content', 'toolCallId', 'name', 'isError');
const TEXT_PART_KEYS = keys('type', 'text');
const IMAGE_PART_KEYS = keys('type', 'url', 'mediaType');
const TOOL_CALL_KEYS = keys('id', 'name', 'arguments');
const PENDING_KEYS = keys('assistantSeq', 'round', 'inputSeq', 'toolCalls', 'unresolvedIds', 'interactions', 'allowedTools');
const LEDGER_KEYS = keys('toolCallId', 'inputSeq', 'round', 'name', 'args', 'status', 'errorCode', 'durationMs');
const USAGE_ROUND_KEYS = keys('inputSeq', 'round', 'provider', 'model', 'llmCalls', 'promptTokens', 'completionTokens', 'cachedTokens', 'cacheWriteTokens', 'reasoningTokens', 'totalTokens', 'costPicoUsd');
const USAGE_ROUND_COUNTS = ['llmCalls', 'promptTokens', 'completionTokens', 'cachedTokens', 'cacheWriteTokens', 'reasoningTokens', 'totalTokens'] as const;
const TRANSITION_KEYS = keys('seq', 'status', 'result', 'errorCode', 'errorMessage');
const RESULT_KEYS = keys('status', 'finalText', 'rounds', 'toolCalls', 'usage', 'output', 'steeredInto', 'agent');
const AGENT_KEYS = keys('name', 'version');
const CHILD_USAGE_KEYS = keys('promptTokens', 'completionTokens', 'cachedTokens', 'cacheWriteTokens', 'reasoningTokens', 'totalTokens', 'llmCalls', 'costUsd', 'costPicoUsd', 'unpricedCalls');
/** A result's usage: its own counts and cost, and its children's under `children`. */
const USAGE_KEYS = keys('promptTokens', 'completionTokens', 'cachedTokens', 'cacheWriteTokens', 'reasoningTokens', 'totalTokens', 'llmCalls', 'costUsd', 'costPicoUsd', 'unpricedCalls', 'children');

const MESSAGE_KIND_SET: ReadonlySet<unknown> = new Set(MESSAGE_KINDS);
const TOOL_CALL_STATUS_SET: ReadonlySet<unknown> = new Set(TOOL_CALL_STATUSES);
const TERMINAL_STATUS_SET: ReadonlySet<unknown> = new Set(TERMINAL_INPUT_STATUSES);
const RUN_OUTCOME_SET: ReadonlySet<unknown> = new Set(RUN_OUTCOMES);

/**
 * The step as `validateStep` returns it when the fast path can vouch for it, else undefined. The
 * result shares the step's parts (nothing is copied); only the top level is new, with the empty lists
 * the schema's defaults would give.
 */
export function checkedStep(step: StepCommit): ValidatedStep | undefined {
  const raw = step as unknown;
  if (!fields(raw, STEP_KEYS) || raw['compaction'] !== undefined || raw['steer'] !== undefined) return undefined;
  const { messages, pending, toolCalls = [], usageRounds = [], input } = raw;
  if (!Array.isArray(messages) || !messages.every(isStepMessage)) return undefined;
  if (pending !== undefined && pending !== null && !isPendingState(pending)) return undefined;
  if (!Array.isArray(toolCalls) || !toolCalls.every(isLedgerWrite) || !distinct(toolCalls, sameToolCall)) return undefined;
  if (!Array.isArray(usageRounds) || !usageRounds.every(isUsageRound) || !distinct(usageRounds, sameRound)) return undefined;
  if (input !== undefined && !isTransition(input)) return undefined;
  const checked: Fields = { messages, toolCalls, usageRounds };
  if (pending !== undefined) checked['pending'] = pending;
  if (input !== undefined) checked['input'] = input;
  return checked as ValidatedStep;
}

/** A plain object (as the schema reads one) holding no key outside `allowed`. */
function fields(value: unknown, allowed: ReadonlySet<string>): value is Fields {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
}

function isSeq(value: unknown): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

function isCount(value: unknown): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function isInt4(value: unknown): boolean {
  return isCount(value) && (value as number) <= INT4_MAX;
}

function isText(value: unknown): boolean {
  return typeof value === 'string' && value.length > 0;
}

function isStepMessage(entry: unknown): boolean {
  if (!fields(entry, STEP_MESSAGE_KEYS)) return false;
  // A missing kind is left to the schema, whose default fills it in.
  return (entry['inputSeq'] === null || isSeq(entry['inputSeq'])) && (entry['round'] === null || isInt4(entry['round'])) && MESSAGE_KIND_SET.has(entry['kind']) && isMessage(entry['message']);
}

function isMessage(message: unknown): boolean {
  if (typeof message !== 'object' || message === null) return false;
  switch ((message as Fields)['role']) {
    case 'system':
      return fields(message, SYSTEM_KEYS) && typeof message['content'] === 'string';
    case 'user':
      return fields(message, USER_KEYS) && isContent(message['content']) && (message['name'] === undefined || typeof message['name'] === 'string');
    case 'assistant':
      return fields(message, ASSISTANT_KEYS) && isContent(message['content']) && (message['toolCalls'] === undefined || isToolCalls(message['toolCalls'], 0));
    case 'tool':
      return (
        fields(message, TOOL_KEYS) &&
        isContent(message['content']) &&
        isText(message['toolCallId']) &&
        typeof message['name'] === 'string' &&
        (message['isError'] === undefined || typeof message['isError'] === 'boolean')
      );
    default:
      return false;
  }
}

function isContent(content: unknown): boolean {
  return typeof content === 'string' || (Array.isArray(content) && content.every(isContentPart));
}

function isContentPart(part: unknown): boolean {
  if (typeof part !== 'object' || part === null) return false;
  switch ((part as Fields)['type']) {
    case 'text':
      return fields(part, TEXT_PART_KEYS) && typeof part['text'] === 'string';
    case 'image':
      return fields(part, IMAGE_PART_KEYS) && isText(part['url']) && (part['mediaType'] === undefined || typeof part['mediaType'] === 'string');
    default:
      return false;
  }
}

function isToolCalls(calls: unknown, min: number): calls is Fields[] {
  return Array.isArray(calls) && calls.length >= min && calls.every((call) => fields(call, TOOL_CALL_KEYS) && isText(call['id']) && isText(call['name']) && typeof call['arguments'] === 'string');
}

/** A pending state with no question for a human (those are rare, and their metadata is the schema's to check). */
function isPendingState(state: unknown): boolean {
  if (!fields(state, PENDING_KEYS) || !isCount(state['assistantSeq']) || !isCount(state['round']) || !isCount(state['inputSeq'])) return false;
  const { toolCalls, unresolvedIds, interactions, allowedTools } = state;
  if (!isToolCalls(toolCalls, 1) || !Array.isArray(interactions) || interactions.length > 0) return false;
  // Absent (the key left out: a present `undefined` is the schema's to strip), null, or names.
  if ('allowedTools' in state && allowedTools !== null && !(Array.isArray(allowedTools) && allowedTools.every(isText))) return false;
  // Every unresolved id names one of the state's calls.
  return Array.isArray(unresolvedIds) && unresolvedIds.length > 0 && unresolvedIds.every((id) => isText(id) && toolCalls.some((call) => call['id'] === id));
}

function isLedgerWrite(row: unknown): boolean {
  if (!fields(row, LEDGER_KEYS)) return false;
  const id = row['toolCallId'];
  const { errorCode, durationMs } = row;
  return (
    isText(id) &&
    (id as string).length <= TOOL_CALL_ID_MAX &&
    // The arguments may be anything, but the key must be there (the schema requires it).
    'args' in row &&
    isSeq(row['inputSeq']) &&
    isInt4(row['round']) &&
    isText(row['name']) &&
    TOOL_CALL_STATUS_SET.has(row['status']) &&
    (errorCode === undefined || errorCode === null || typeof errorCode === 'string') &&
    (durationMs === undefined || durationMs === null || isInt4(durationMs))
  );
}

function isUsageRound(row: unknown): boolean {
  return (
    fields(row, USAGE_ROUND_KEYS) &&
    isSeq(row['inputSeq']) &&
    isInt4(row['round']) &&
    isText(row['provider']) &&
    isText(row['model']) &&
    USAGE_ROUND_COUNTS.every((name) => isInt4(row[name])) &&
    // Left to the schema when absent: its default (null) fills it in.
    (row['costPicoUsd'] === null || isCount(row['costPicoUsd']))
  );
}

function isTransition(input: unknown): boolean {
  if (!fields(input, TRANSITION_KEYS)) return false;
  const { result, errorCode, errorMessage } = input;
  return (
    isSeq(input['seq']) &&
    TERMINAL_STATUS_SET.has(input['status']) &&
    (result === undefined || isResult(result)) &&
    (errorCode === undefined || isText(errorCode)) &&
    (errorMessage === undefined || typeof errorMessage === 'string')
  );
}

function isResult(result: unknown): boolean {
  if (!fields(result, RESULT_KEYS)) return false;
  const usage = result['usage'];
  return (
    RUN_OUTCOME_SET.has(result['status']) &&
    typeof result['finalText'] === 'string' &&
    isCount(result['rounds']) &&
    isCount(result['toolCalls']) &&
    isUsage(usage, USAGE_KEYS) &&
    (usage.children === undefined || isUsage(usage.children, CHILD_USAGE_KEYS)) &&
    (result['steeredInto'] === undefined || isSeq(result['steeredInto'])) &&
    (result['agent'] === undefined || isAgentRef(result['agent']))
  );
}

function isUsage(usage: unknown, allowed: ReadonlySet<string>): usage is Fields {
  return (
    fields(usage, allowed) &&
    USAGE_ROUND_COUNTS.every((name) => isCount(usage[name])) &&
    // Absent cost fields are left to the schema, whose defaults fill them in.
    isCount(usage['costPicoUsd']) &&
    typeof usage['costUsd'] === 'number' &&
    Number.isFinite(usage['costUsd']) &&
    usage['costUsd'] >= 0 &&
    (usage['unpricedCalls'] === undefined || isCount(usage['unpricedCalls']))
  );
}

function isAgentRef(agent: unknown): boolean {
  return fields(agent, AGENT_KEYS) && isText(agent['name']) && isText(agent['version']);
}

/** No two rows the same by `same` (a step's lists are short: pairs are compared, nothing allocated). */
function distinct(rows: readonly Fields[], same: (a: Fields, b: Fields) => boolean): boolean {
  for (let i = 1; i < rows.length; i += 1) {
    for (let j = 0; j < i; j += 1) if (same(rows[i]!, rows[j]!)) return false;
  }
  return true;
}

function sameToolCall(a: Fields, b: Fields): boolean {
  return a['toolCallId'] === b['toolCallId'];
}

function sameRound(a: Fields, b: Fields): boolean {
  return a['inputSeq'] === b['inputSeq'] && a['round'] === b['round'];
}
