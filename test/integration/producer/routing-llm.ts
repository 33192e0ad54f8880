import { contentText, type Message } from '../../../src/core/messages.js';
import type { LlmRequest } from '../../../src/core/ports/llm.js';
import { ScriptedLlm, type ScriptedReply } from '../../../src/llm/scripted-llm.js';

/**
 * Gates a test opens by name: a model call for `hold:<name>` waits on its gate (abortably, so a
 * cancel still reaches it) until the test calls `open(name)`.
 */
export class Gates {
  readonly #gates = new Map<string, { promise: Promise<void>; open: () => void }>();

  wait(name: string): Promise<void> {
    return this.#gate(name).promise;
  }

  open(name: string): void {
    this.#gate(name).open();
  }

  /** Opens every gate, so no run is left waiting when the fleet closes. */
  openAll(): void {
    for (const gate of this.#gates.values()) gate.open();
  }

  #gate(name: string) {
    let gate = this.#gates.get(name);
    if (gate === undefined) {
      let open!: () => void;
      const promise = new Promise<void>((resolve) => (open = resolve));
      gate = { promise, open };
      this.#gates.set(name, gate);
    }
    return gate;
  }
}

/**
 * A scripted model that answers by the conversation's last message, so one worker serves every test
 * of a file: `hold:<name>` streams after the gate opens; `ask:<prompt>` calls `request_user_input`;
 * a tool result (the submitted answer) is acknowledged as `Got: <answer>`; anything else is echoed.
 */
export function routingLlm(gates: Gates): ScriptedLlm {
  const route = (request: LlmRequest): ScriptedReply => {
    const last: Message | undefined = request.messages[request.messages.length - 1];
    if (last?.role === 'tool') return { text: `Got: ${contentText(last.content)}` };
    const text = last === undefined ? '' : contentText(last.content);
    if (text.startsWith('hold:')) return { gate: gates.wait(text.slice(5)), chunks: ['held ', text.slice(5)] };
    if (text.startsWith('ask:')) return { toolCalls: [{ name: 'request_user_input', arguments: { prompt: text.slice(4) } }] };
    return { chunks: ['Echo', ': ', text] };
  };
  return new ScriptedLlm(Array.from({ length: 5_000 }, () => route), { recordRequests: false });
}
