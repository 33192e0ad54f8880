import type { StreamEvent } from '../fleet/fleet-events.js';

/** One entry as ioredis returns it from XREAD/XRANGE: its id and its fields as a flat name/value list. */
export type RawStreamEntry = [id: string, fields: string[]];

/** The XREAD reply shape in ioredis: per stream key, its entries; null when BLOCK timed out. */
export type RawXReadReply = [key: string, entries: RawStreamEntry[]][] | null;

/**
 * Turns a raw entry into a {@link StreamEvent}. Never throws: an entry whose `data` is not a JSON
 * object carrying a numeric `seq` (written by something other than loopfleet, or corrupted) is
 * returned with its `type` as is, `seq` 0 (real ones start at 1), and the text under `data.raw`, so
 * one bad entry cannot stop a subscriber.
 */
export function parseStreamEntry(sessionId: string, entry: RawStreamEntry): StreamEvent {
  const [id, fields] = entry;
  const type = fieldValue(fields, 'type') ?? '';
  const text = fieldValue(fields, 'data');
  const data = text === undefined ? undefined : parseData(text);
  if (data !== undefined) return { kind: 'event', id, type, data };
  return { kind: 'event', id, type, data: { sessionId, inputSeq: null, seq: 0, raw: text ?? null } };
}

/** Whether an event came from a malformed entry (see {@link parseStreamEntry}). */
export function isMalformed(event: StreamEvent): boolean {
  return event.data.seq === 0;
}

function fieldValue(fields: string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === name) return fields[i + 1];
  }
  return undefined;
}

function parseData(text: string): StreamEvent['data'] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const data = value as Record<string, unknown>;
  const { seq, sessionId, inputSeq } = data;
  if (typeof seq !== 'number' || !Number.isInteger(seq) || seq < 1) return undefined;
  if (typeof sessionId !== 'string') return undefined;
  if (inputSeq !== null && typeof inputSeq !== 'number') return undefined;
  // The checks above narrowed the envelope; `data` is this parse's own object, returned as it is.
  return data as StreamEvent['data'];
}
