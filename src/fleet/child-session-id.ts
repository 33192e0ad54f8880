import { createHash } from 'node:crypto';
import { isValidSessionId, RESERVED_SESSION_ID_SUFFIXES } from './session-id.js';

/**
 * The id of the child session a `spawn_agent` call starts: `<parent>:sub:<toolCallId>`, so the same
 * call — retried, or run again by the worker that took over — always names the same child, and a
 * reader can tell whose child it is. When that is no valid new session id (too long, a character
 * outside `[A-Za-z0-9_.:-]`, a reserved suffix), it is `sub-` and 40 hex characters of a SHA-256 of
 * the two instead: fixed length, still one per call.
 */
export function childSessionId(parentSessionId: string, toolCallId: string): string {
  const readable = `${parentSessionId}:sub:${toolCallId}`;
  if (isValidSessionId(readable) && !RESERVED_SESSION_ID_SUFFIXES.some((suffix) => readable.endsWith(suffix))) return readable;
  return `sub-${createHash('sha256').update(parentSessionId).update('\0').update(toolCallId).digest('hex').slice(0, 40)}`;
}
