import { assertCursor, ONLY_NEW } from '../../events/stream-id.js';

/**
 * The cursor an event stream request reads after: the `Last-Event-ID` header wins over `?after=`
 * (a browser's `EventSource` reconnects to the same URL with the header), then `$` (only new
 * events). Throws `input.invalid` for anything but a stream id, `0` or `$`, before the stream opens.
 */
export function resolveEventCursor(lastEventId: string | string[] | undefined, after: string | undefined): string {
  const header = Array.isArray(lastEventId) ? lastEventId[0] : lastEventId;
  const cursor = header !== undefined && header.trim() !== '' ? header.trim() : (after ?? ONLY_NEW);
  assertCursor(cursor, { allowOnlyNew: true });
  return cursor;
}
