/**
 * What every system of the peers benchmark shares: the standard model (scripted in process, or the
 * real `openai` SDK against the loopback fake server) and the stream entries an input writes.
 * A system calls these from inside its own steps; it does not reimplement them.
 *
 * Entries go to `peers:<runId>:events:<sessionId>` with pipelined XADDs. Besides the entries, the
 * `started` write pushes the input's accept → start latency to `peers:<runId>:starts`, and the
 * `finished` write increments `peers:<runId>:finished`: the orchestrator counts finishes and reads
 * latencies from these two keys, the same extra two commands on every system.
 */
import type { Redis } from 'ioredis';
import type { StandardInput } from './system.js';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  toolCalls?: Array<{ id: string; name: string; arguments: string }>;
  toolCallId?: string;
}

export interface ModelReply {
  text: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  usage: { promptTokens: number; completionTokens: number };
}

/**
 * The standard model. Call 1 (the last message is not a tool result) returns one `noop` call; call 2
 * (the last message is a tool result) streams 10 deltas through `onDelta`, then resolves the text.
 */
export interface StandardModel {
  call(messages: readonly ChatMessage[], onDelta: (text: string) => void): Promise<ModelReply>;
}

export const ANSWER_CHUNKS = 10;

export function streamKey(runId: string, sessionId: string): string {
  return `peers:${runId}:events:${sessionId}`;
}
export function finishedKey(runId: string): string {
  return `peers:${runId}:finished`;
}
export function startsKey(runId: string): string {
  return `peers:${runId}:starts`;
}

/**
 * The stream entries of one input, written in the same groups on every system (28 in all):
 * `started` (2), after call 1 (4), after the tool (3), each answer delta (1 each, 10) batched as the
 * system likes, after call 2 (4), `finished` (5). Entry types and sizes follow what loopfleet writes
 * for the standard input.
 */
export class InputEvents {
  readonly #redis: Redis;
  readonly #key: string;
  readonly #runId: string;
  readonly #input: StandardInput;

  constructor(redis: Redis, runId: string, input: StandardInput) {
    this.#redis = redis;
    this.#runId = runId;
    this.#key = streamKey(runId, input.sessionId);
    this.#input = input;
  }

  /** First thing the input's processing does. */
  async started(): Promise<void> {
    const now = Date.now();
    const p = this.#redis.pipeline();
    this.#add(p, 'input_started', { inputId: this.#input.inputId, addedAt: this.#input.addedAt, startedAt: now });
    this.#add(p, 'message', { role: 'user', content: this.#input.text });
    p.rpush(startsKey(this.#runId), String(now - this.#input.addedAt));
    await p.exec();
  }

  async afterFirstCall(reply: ModelReply): Promise<void> {
    const p = this.#redis.pipeline();
    this.#add(p, 'llm_call_started', { call: 1 });
    this.#add(p, 'llm_call_finished', { call: 1, usage: reply.usage });
    this.#add(p, 'message', { role: 'assistant', content: reply.text, toolCalls: reply.toolCalls });
    this.#add(p, 'tool_call_started', { id: reply.toolCalls[0]?.id, name: reply.toolCalls[0]?.name });
    await p.exec();
  }

  async afterTool(callId: string, result: string): Promise<void> {
    const p = this.#redis.pipeline();
    this.#add(p, 'tool_call_finished', { id: callId, ok: true });
    this.#add(p, 'message', { role: 'tool', toolCallId: callId, content: result });
    this.#add(p, 'llm_call_started', { call: 2 });
    await p.exec();
  }

  /** The answer deltas received so far (call with each delta, or with several at once). */
  async deltas(texts: readonly string[]): Promise<void> {
    if (texts.length === 0) return;
    const p = this.#redis.pipeline();
    for (const text of texts) this.#add(p, 'stream_delta', { text });
    await p.exec();
  }

  async afterSecondCall(reply: ModelReply): Promise<void> {
    const p = this.#redis.pipeline();
    this.#add(p, 'stream_end', {});
    this.#add(p, 'llm_call_finished', { call: 2, usage: reply.usage });
    this.#add(p, 'message', { role: 'assistant', content: reply.text });
    this.#add(p, 'usage', { promptTokens: 70, completionTokens: 25 });
    await p.exec();
  }

  /** After the input's history is durable. */
  async finished(): Promise<void> {
    const p = this.#redis.pipeline();
    this.#add(p, 'turn_finished', { inputId: this.#input.inputId });
    this.#add(p, 'idle', {});
    this.#add(p, 'state', { status: 'idle' });
    this.#add(p, 'checkpoint', { inputId: this.#input.inputId });
    this.#add(p, 'input_finished', { inputId: this.#input.inputId, status: 'completed' });
    p.incr(finishedKey(this.#runId));
    await p.exec();
  }

  #add(p: ReturnType<Redis['pipeline']>, type: string, data: Record<string, unknown>): void {
    p.xadd(this.#key, 'MAXLEN', '~', '10000', '*', 'type', type, 'data', JSON.stringify(data));
  }
}

/** The scripted model, in process: no I/O, the same replies as loopfleet's `StandardScriptedLlm`. */
export function scriptedModel(): StandardModel {
  let calls = 0;
  return {
    async call(messages, onDelta) {
      calls += 1;
      if (messages.at(-1)?.role !== 'tool') {
        return { text: '', toolCalls: [{ id: `call_${calls}`, name: 'noop', arguments: '{}' }], usage: { promptTokens: 30, completionTokens: 5 } };
      }
      const chunks = Array.from({ length: ANSWER_CHUNKS }, (_, i) => `word${i} `);
      for (const chunk of chunks) onDelta(chunk);
      return { text: chunks.join(''), toolCalls: [], usage: { promptTokens: 40, completionTokens: 20 } };
    },
  };
}

/**
 * The real `openai` SDK against the bench's fake server (`bench/lib/openai-fake-process.ts`): both calls
 * stream, and the SDK's own stream is iterated, as a peer's user would write it.
 */
export async function openAiModel(baseURL: string): Promise<StandardModel> {
  const { default: OpenAI } = await import('openai');
  const client = new OpenAI({ apiKey: 'bench', baseURL, maxRetries: 0 });
  return {
    async call(messages, onDelta) {
      const stream = await client.chat.completions.create({
        model: 'bench',
        stream: true,
        stream_options: { include_usage: true },
        messages: messages.map(toOpenAi),
      });
      let text = '';
      const toolCalls: ModelReply['toolCalls'] = [];
      const usage = { promptTokens: 0, completionTokens: 0 };
      for await (const chunk of stream) {
        if (chunk.usage) {
          usage.promptTokens = chunk.usage.prompt_tokens;
          usage.completionTokens = chunk.usage.completion_tokens;
        }
        const delta = chunk.choices[0]?.delta;
        if (delta?.content) {
          text += delta.content;
          onDelta(delta.content);
        }
        for (const call of delta?.tool_calls ?? []) {
          const slot = (toolCalls[call.index] ??= { id: '', name: '', arguments: '' });
          if (call.id) slot.id = call.id;
          if (call.function?.name) slot.name += call.function.name;
          if (call.function?.arguments) slot.arguments += call.function.arguments;
        }
      }
      return { text, toolCalls, usage };
    },
  };
}

export function createStandardModel(kind: 'scripted' | 'openai', baseURL?: string): Promise<StandardModel> {
  if (kind === 'scripted') return Promise.resolve(scriptedModel());
  if (baseURL === undefined) throw new Error('the openai model needs the fake server URL');
  return openAiModel(baseURL);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function toOpenAi(message: ChatMessage): any {
  if (message.role === 'tool') return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  if (message.role === 'assistant' && message.toolCalls && message.toolCalls.length > 0) {
    return { role: 'assistant', content: message.content || null, tool_calls: message.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) };
  }
  return { role: message.role, content: message.content };
}

/** The `noop` tool. */
export function noopTool(_args: string): string {
  return 'ok';
}
