import type { InputRecord } from '../../core/session-types.js';
import type { SessionQueue } from '../../producer/session-queue.js';
import { historyToUiMessages, type UiMessage } from './history-to-ui-messages.js';

/** Inputs per page while loading a chat. */
const INPUT_PAGE = 1000;

/** A session's history and inputs as `UIMessage`s (`historyToUiMessages`). */
export async function loadChatMessages(queue: SessionQueue, sessionId: string): Promise<UiMessage[]> {
  const messages = await queue.history(sessionId);
  const inputs: InputRecord[] = [];
  for (;;) {
    const afterSeq = inputs.at(-1)?.seq ?? 0;
    const page = await queue.sessions.inputs(sessionId, { afterSeq, limit: INPUT_PAGE });
    inputs.push(...page);
    if (page.length < INPUT_PAGE) break;
  }
  return historyToUiMessages(sessionId, messages, inputs);
}
