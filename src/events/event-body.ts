import type { FleetEvent } from '../fleet/fleet-events.js';

/**
 * The `data` field of a stream entry, built in two halves because the per-session
 * `seq` only exists inside Redis: JS serialises everything else, and the publish script prefixes
 * `{"seq":N,`. The JSON is never decoded and re-encoded in Lua, where cjson would turn `[]` into `{}`.
 */

/** One entry ready for the publish script: its `type` field and its `data` without the opening `{`. */
export interface EncodedEvent {
  type: string;
  body: string;
  /**
   * Set on an `input_finished` of an input: that input's seq. The publish script writes at most one
   * such entry per session and input (I6); entries without it are never deduplicated.
   */
  finishes?: number;
  /**
   * Set on the `input_accepted` of a session's input 1: the session starts (again). The publish
   * script forgets the finished inputs it remembers for the session id — left by an earlier session of
   * the same id whose Redis keys a delete could not remove — so none of the new session's finishes is
   * taken for a duplicate.
   */
  firstInput?: true;
}

/** Fields the envelope owns; a payload field of the same name would shadow or duplicate them. */
const ENVELOPE_KEYS = new Set(['type', 'seq', 'sessionId', 'inputSeq']);

/** `"sessionId":…,"inputSeq":…`: the start of every entry's `data` after `seq`. */
export function envelopeHead(sessionId: string, inputSeq: number | null): string {
  return `"sessionId":${JSON.stringify(sessionId)},"inputSeq":${inputSeq === null ? 'null' : JSON.stringify(inputSeq)}`;
}

/** `{"type":"<type>"` per event type seen (bounded: a few dozen types exist). */
const leads = new Map<string, string>();

function leadOf(type: string): string {
  let lead = leads.get(type);
  if (lead === undefined) {
    lead = `{"type":${JSON.stringify(type)}`;
    if (leads.size < 256) leads.set(type, lead);
  }
  return lead;
}

/**
 * Encodes an event for the stream: `type` on its own field, and the payload (camelCase, as in the TS
 * types) after `sessionId` and `inputSeq` (`head`, which a caller encoding many events of one input
 * can build once). Throws when the payload is not JSON-serialisable (a BigInt, a cycle) — the caller
 * counts that event as dropped.
 */
export function encodeEvent(sessionId: string, inputSeq: number | null, event: FleetEvent, head = envelopeHead(sessionId, inputSeq)): EncodedEvent {
  // Every event is written once and most are small, so the common shape — `type` first, no envelope
  // field in the payload — is encoded with one stringify and no copy of the event.
  if (typeof event.type === 'string' && !('seq' in event) && !('sessionId' in event) && !('inputSeq' in event)) {
    const json = JSON.stringify(event);
    const lead = leadOf(event.type);
    if (json.startsWith(lead)) {
      // Always starts with `"sessionId":`, so the script's `{"seq":N,` prefix yields valid JSON.
      return entry(event.type, json.length === lead.length + 1 ? `${head}}` : head + json.slice(lead.length), inputSeq);
    }
  }
  const data: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(event)) {
    if (!ENVELOPE_KEYS.has(key)) data[key] = value;
  }
  const json = JSON.stringify(data);
  return entry(event.type, json === '{}' ? `${head}}` : `${head},${json.slice(1)}`, inputSeq);
}

function entry(type: string, body: string, inputSeq: number | null): EncodedEvent {
  if (type === 'input_finished' && inputSeq !== null) return { type, body, finishes: inputSeq };
  if (type === 'input_accepted' && inputSeq === 1) return { type, body, firstInput: true };
  return { type, body };
}

/** The complete `data` text for a given `seq`: what the publish script writes. Used by tests and the bench floor. */
export function dataText(seq: number, body: string): string {
  return `{"seq":${seq},${body}`;
}
