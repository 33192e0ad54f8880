import type { FleetEvent } from './fleet-events.js';

/**
 * The `data` field of a stream entry (DESIGN.md §4.7), built in two halves because the per-session
 * `seq` only exists inside Redis: JS serialises everything else, and the publish script prefixes
 * `{"seq":N,`. The JSON is never decoded and re-encoded in Lua, where cjson would turn `[]` into `{}`.
 */

/** One entry ready for the publish script: its `type` field and its `data` without the opening `{`. */
export interface EncodedEvent {
  type: string;
  body: string;
}

/** Fields the envelope owns; a payload field of the same name would shadow or duplicate them. */
const ENVELOPE_KEYS = new Set(['type', 'seq', 'sessionId', 'inputSeq']);

/**
 * Encodes an event for the stream: `type` on its own field, and the payload (camelCase, as in the TS
 * types) after `sessionId` and `inputSeq`. Throws when the payload is not JSON-serialisable
 * (a BigInt, a cycle) — the caller counts that event as dropped.
 */
export function encodeEvent(sessionId: string, inputSeq: number | null, event: FleetEvent): EncodedEvent {
  const data: Record<string, unknown> = { sessionId, inputSeq };
  for (const [key, value] of Object.entries(event)) {
    if (!ENVELOPE_KEYS.has(key)) data[key] = value;
  }
  // Always starts with `{"sessionId":`, so the script's `{"seq":N,` prefix yields valid JSON.
  return { type: event.type, body: JSON.stringify(data).slice(1) };
}

/** The complete `data` text for a given `seq`: what the publish script writes. Used by tests and the bench floor. */
export function dataText(seq: number, body: string): string {
  return `{"seq":${seq},${body}`;
}
