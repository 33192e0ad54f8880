/**
 * Streamed tool-call fragments → whole tool calls.
 *
 * OpenAI sends each call as a first fragment with `index`, `id` and the function name, then argument
 * fragments with only the `index`. Compatible endpoints bend this: some reuse index 0 for every call,
 * some send no index at all, some no id. Merging by index alone then glues two calls into one —
 * `read_file` with arguments `{"path":"a"}{"path":"b"}`. So a fragment
 * starts a new call, even at an index already in use, when it plainly belongs to another call:
 * - it carries an id, and the call at its slot already has a different id; or
 * - it carries no id but a function name, and the call at its slot is already named — with another
 *   name, or with arguments that already form a complete JSON value (a repeated name while the
 *   arguments are still streaming is a continuation, as some endpoints repeat it).
 * A fragment's slot is the call last started at its `index`; without an index, the call with its id,
 * or else the call started last.
 */
import { LlmBadResponseError } from '../../core/errors/index.js';
import type { ToolCall } from '../../core/messages.js';
import type { ToolCallDelta } from './read-chunk.js';

interface DraftCall {
  id: string | null;
  name: string;
  arguments: string;
}

/** Collects the tool-call fragments of one response, in the order the calls started. */
export class ToolCallAssembler {
  readonly #calls: DraftCall[] = [];
  readonly #byIndex = new Map<number, DraftCall>();

  /** Number of calls started so far. */
  get size(): number {
    return this.#calls.length;
  }

  add(delta: ToolCallDelta): void {
    let call = this.#slot(delta);
    if (call === undefined || startsNewCall(call, delta)) {
      call = { id: null, name: '', arguments: '' };
      this.#calls.push(call);
    }
    if (delta.index !== undefined) this.#byIndex.set(delta.index, call);
    if (delta.id !== undefined && call.id === null) call.id = delta.id;
    if (delta.name !== undefined && call.name === '') call.name = delta.name;
    if (delta.arguments !== undefined) call.arguments += delta.arguments;
  }

  /**
   * The finished calls. A call the endpoint sent without an id gets `<idPrefix>_<position>`, unique
   * within the response; the arguments are returned exactly as streamed — never repaired, since a
   * truncated argument string must not turn into a call that runs.
   * Throws `LlmBadResponseError` for a call without a function name.
   */
  finish(idPrefix: string): ToolCall[] {
    const taken = new Set(this.#calls.map((call) => call.id));
    return this.#calls.map((call, position) => {
      if (call.name === '') {
        throw new LlmBadResponseError(`tool call ${position} in the stream has no function name`, { details: { provider: 'openai', position } });
      }
      return { id: call.id ?? freshId(idPrefix, position, taken), name: call.name, arguments: call.arguments };
    });
  }

  #slot(delta: ToolCallDelta): DraftCall | undefined {
    if (delta.index !== undefined) return this.#byIndex.get(delta.index);
    if (delta.id !== undefined) return this.#calls.find((call) => call.id === delta.id);
    return this.#calls.at(-1);
  }
}

function startsNewCall(call: DraftCall, delta: ToolCallDelta): boolean {
  if (delta.id !== undefined) return call.id !== null && call.id !== delta.id;
  if (delta.name === undefined || call.name === '') return false;
  return delta.name !== call.name || isCompleteJson(call.arguments);
}

function isCompleteJson(text: string): boolean {
  if (text.trim() === '') return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function freshId(prefix: string, position: number, taken: Set<string | null>): string {
  let id = `${prefix}_${position}`;
  while (taken.has(id)) id = `${id}_`;
  taken.add(id);
  return id;
}
