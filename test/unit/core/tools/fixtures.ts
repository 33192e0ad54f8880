import type { ToolCall } from '../../../../src/core/messages.js';
import type { AnyToolDefinition, ToolDefinition } from '../../../../src/core/tools/index.js';

/** A promise with its resolve exposed, for handlers the test releases. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** A model tool call with arguments given as an object (or raw text). */
export function toolCall(id: string, name: string, args: Record<string, unknown> | string = {}): ToolCall {
  return { id, name, arguments: typeof args === 'string' ? args : JSON.stringify(args) };
}

/** A tool with an empty-object schema. */
export function simpleTool(name: string, execute: ToolDefinition['execute'], extra: Partial<ToolDefinition> = {}): AnyToolDefinition {
  return { name, description: `${name} tool`, parameters: { type: 'object' }, execute, ...extra };
}

/** Resolves when the signal aborts; for handlers that do nothing but honour cancellation. */
export function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const fail = (): void => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}
