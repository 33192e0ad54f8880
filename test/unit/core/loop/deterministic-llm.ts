import { contentText, type Message } from '../../../../src/core/messages.js';
import { SUMMARY_SYSTEM_PROMPT } from '../../../../src/core/compaction/index.js';
import type { Llm, LlmCallOptions, LlmRequest, LlmResponse } from '../../../../src/core/ports/llm.js';

/**
 * A model whose reply is a pure function of the request, so a run replayed after a crash gets the
 * same replies as the uninterrupted run. A user message `task:<name>:<k>` asks for `k` tool rounds
 * (two parallel `add` calls each) and then the answer `done:<name>`, streamed in three chunks.
 */
export class DeterministicLlm implements Llm {
  readonly provider = 'deterministic';
  readonly model = 'det-1';
  calls = 0;

  async complete(request: LlmRequest, options: LlmCallOptions): Promise<LlmResponse> {
    this.calls += 1;
    if (request.systemPrompt === SUMMARY_SYSTEM_PROMPT) return reply(`summary of ${contentText(request.messages[0]!.content).length} chars`, []);
    const messages = request.messages;
    const taskIndex = findLastIndex(messages, (message) => message.role === 'user' && contentText(message.content).startsWith('task:'));
    const [, name = '?', rounds = '0'] = taskIndex < 0 ? [] : contentText(messages[taskIndex]!.content).split(':');
    const toolRounds = messages.slice(taskIndex + 1).filter((message) => message.role === 'assistant' && (message.toolCalls?.length ?? 0) > 0).length;
    if (toolRounds < Number(rounds)) {
      // Unique per session (task names are), and the same on a replay.
      const id = `${name}${toolRounds}`;
      return reply('', [
        { id: `${id}a`, name: 'add', arguments: JSON.stringify({ a: toolRounds, b: 2 }) },
        { id: `${id}b`, name: 'add', arguments: JSON.stringify({ a: toolRounds, b: 3 }) },
      ]);
    }
    const text = `done:${name}`;
    for (const chunk of [text.slice(0, 2), text.slice(2, 4), text.slice(4)]) if (chunk !== '') options.handlers?.onTextDelta?.(chunk);
    return reply(text, []);
  }
}

/** A deterministic reply: `text` and `toolCalls`, fixed usage. */
export function reply(text: string, toolCalls: LlmResponse['toolCalls']): LlmResponse {
  return {
    text,
    thinking: '',
    toolCalls,
    finishReason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
    rawFinishReason: null,
    usage: { promptTokens: 10, completionTokens: 5, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 15 },
    model: 'det-1',
    provider: 'deterministic',
  };
}

export function findLastIndex(messages: readonly Message[], predicate: (message: Message) => boolean): number {
  for (let index = messages.length - 1; index >= 0; index -= 1) if (predicate(messages[index]!)) return index;
  return -1;
}

/** A deterministic, idempotent, concurrency-safe tool; counts executions per idempotency key. */
export function addTool(executions: Map<string, number>) {
  return {
    name: 'add',
    description: 'Add two numbers',
    parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
    concurrencySafe: true,
    execute: (args: { a: number; b: number }, ctx: { idempotencyKey: string }) => {
      executions.set(ctx.idempotencyKey, (executions.get(ctx.idempotencyKey) ?? 0) + 1);
      return { sum: args.a + args.b };
    },
  };
}
