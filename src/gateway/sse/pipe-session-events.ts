import type { StreamItem } from '../../fleet/fleet-events.js';
import type { SseMessage, SseWriter } from './sse-writer.js';

/** One subscription item as an SSE event: its stream id, type and data; a gap as `event: gap`. */
export function toSseMessage(item: StreamItem): SseMessage {
  if (item.kind === 'gap') {
    const data = { after: item.after, firstAvailable: item.firstAvailable, resumeFrom: item.resumeFrom };
    return { id: item.resumeFrom, event: 'gap', data: JSON.stringify(data) };
  }
  return { id: item.id, event: item.type, data: JSON.stringify(item.data) };
}

/**
 * Writes a subscription to an SSE response until the client goes (the writer's signal, which the
 * subscription was opened with, ends it at once) or the subscription ends. `onSent` counts events.
 */
export async function pipeSessionEvents(items: AsyncIterable<StreamItem>, writer: SseWriter, onSent: () => void = () => undefined): Promise<void> {
  for await (const item of items) {
    if (writer.signal.aborted) break;
    await writer.send(toSseMessage(item));
    onSent();
  }
}
