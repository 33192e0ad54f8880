import type { ChunkSourceEvent } from './ui-message-chunks.js';

const DELTAS = new Set(['stream_delta', 'stream_think_delta']);
const STREAM_MARKS = new Set(['stream_started', 'stream_discarded']);

/**
 * Leaves out what a replay already knows to be void: the deltas a `stream_discarded` voids (those
 * since the stream's start or its previous discard: the model call starts over) and, before an
 * `input_resumed` with reason `worker_lost`, what the lost attempt did after its last completed
 * round (the new worker redoes it). Live, a client has already seen those deltas
 * (docs/gateway-streams.md says how that looks).
 */
export function dropDiscarded<E extends ChunkSourceEvent>(events: readonly E[]): E[] {
  const kept: E[] = [];
  for (const event of events) {
    if (event.type === 'stream_discarded') dropVoidDeltas(kept);
    if (event.type === 'input_resumed' && event.data.reason === 'worker_lost') dropLostAttempt(kept);
    kept.push(event);
  }
  return kept;
}

function dropVoidDeltas(kept: ChunkSourceEvent[]): void {
  for (let i = kept.length - 1; i >= 0; i -= 1) {
    const type = kept[i]!.type;
    if (STREAM_MARKS.has(type)) return;
    if (DELTAS.has(type)) kept.splice(i, 1);
  }
}

/** Removes, in place, the current attempt's events after its last `round_completed`. */
function dropLostAttempt(kept: ChunkSourceEvent[]): void {
  let cut = kept.length;
  for (let i = kept.length - 1; i >= 0; i -= 1) {
    const type = kept[i]!.type;
    if (type === 'round_completed') break;
    if (type === 'input_started' || type === 'input_resumed') {
      cut = i + 1;
      break;
    }
    cut = i;
  }
  kept.splice(cut);
}
