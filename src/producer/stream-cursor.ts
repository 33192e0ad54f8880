import { InputInvalidError } from '../core/errors/index.js';
import { isStreamId } from '../events/stream-id.js';

const MAX_SEQ_PART = 18_446_744_073_709_551_615n;

/**
 * The greatest stream id below `id` (`<ms>-<seq>`): reading after it starts exactly at `id`, since
 * Redis ids are unique and increasing. Lets an input handle replay its events from its own
 * `input_accepted` entry without reading the session's whole stream.
 */
export function previousStreamId(id: string): string {
  if (!isStreamId(id)) throw new InputInvalidError(`not a stream id: ${JSON.stringify(id)}`);
  const dash = id.indexOf('-');
  const ms = BigInt(dash === -1 ? id : id.slice(0, dash));
  const seq = dash === -1 ? 0n : BigInt(id.slice(dash + 1));
  if (seq > 0n) return `${ms}-${seq - 1n}`;
  if (ms > 0n) return `${ms - 1n}-${MAX_SEQ_PART}`;
  return '0-0';
}
