/**
 * The standard input as one function, for systems whose idiom is "a job runs the whole input" or
 * "a workflow runs steps": the system supplies how history is loaded and appended and how a step is
 * made durable (`step`: its own `ctx.run` / `runStep`; identity where the job is the unit of retry).
 */
import { InputEvents, noopTool, type ChatMessage, type ModelReply, type StandardModel } from './standard.js';

export interface LoopIdiom {
  loadHistory(): Promise<ChatMessage[]>;
  /** Runs `fn` as a durable step of the system (or directly, where the whole job is the step). */
  step<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /** Appends the input's messages to the durable history, in one transaction. */
  appendHistory(messages: ChatMessage[]): Promise<void>;
}

export async function runStandardInput(model: StandardModel, events: InputEvents, text: string, idiom: LoopIdiom): Promise<void> {
  const history = await idiom.loadHistory();
  await events.started();
  const user: ChatMessage = { role: 'user', content: text };
  const first = await idiom.step('model-1', () => model.call([...history, user], () => undefined));
  await events.afterFirstCall(first);
  const call = first.toolCalls[0];
  if (call === undefined) throw new Error('the standard model answered call 1 without a tool call');
  const assistant: ChatMessage = { role: 'assistant', content: first.text, toolCalls: first.toolCalls };
  const result = await idiom.step('tool', () => Promise.resolve(noopTool(call.arguments)));
  await events.afterTool(call.id, result);
  const toolMessage: ChatMessage = { role: 'tool', toolCallId: call.id, content: result };
  const second = await idiom.step('model-2', () => streamAnswer(model, events, [...history, user, assistant, toolMessage]));
  await events.afterSecondCall(second);
  await idiom.appendHistory([user, assistant, toolMessage, { role: 'assistant', content: second.text }]);
  await events.finished();
}

/**
 * Model call 2, each delta written to the stream as it arrives; deltas that arrive in the same tick
 * (the scripted model's 10, or chunks of one network read) go in one pipeline.
 */
async function streamAnswer(model: StandardModel, events: InputEvents, messages: ChatMessage[]): Promise<ModelReply> {
  let buffer: string[] = [];
  const writes: Promise<void>[] = [];
  const reply = await model.call(messages, (delta) => {
    if (buffer.length === 0) {
      queueMicrotask(() => {
        const batch = buffer;
        buffer = [];
        writes.push(events.deltas(batch));
      });
    }
    buffer.push(delta);
  });
  await Promise.resolve();
  if (buffer.length > 0) {
    writes.push(events.deltas(buffer));
    buffer = [];
  }
  await Promise.all(writes);
  return reply;
}
