import type { RedisConnection } from '../../fleet/redis-connection.js';
import type { StreamItem } from '../../fleet/fleet-events.js';
import { eventStreamKey, type QueueKeys } from '../../fleet/fleet-keys.js';
import { printChildHeader } from './child-header.js';
import { isStreamId, ONLY_NEW } from '../../events/stream-id.js';
import { EXIT, type CliIo } from '../cli-io.js';
import { parseCommandLine, parseIntegerOption } from '../command-line.js';
import { withQueue } from '../connect.js';
import { TAIL_LIMIT, TAIL_QUIET_HINT_MS } from '../limits.js';

const USAGE = 'loopfleet tail <session> [--after <id>] [--no-follow] [--json] [--limit <n>]';

/** Fields of every entry's `data` that the line already shows (or that never change within a session). */
const ENVELOPE = new Set(['sessionId', 'inputSeq', 'seq']);

/**
 * `loopfleet tail <session>`: prints the session's events as they arrive, one a line, until Ctrl-C.
 * `--after <id>` resumes after a stream id (`0`: from the oldest retained event; default: only new
 * ones); `--no-follow` prints what the stream holds now (from the oldest unless `--after`) and exits;
 * `--json` prints each item as JSON; `--limit <n>` exits after n lines. On stderr it says where it
 * starts, and once that it is waiting when nothing came for a few seconds.
 */
export async function tailCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({
    args,
    allowPositionals: true,
    options: { after: { type: 'string' }, 'no-follow': { type: 'boolean', default: false }, json: { type: 'boolean', default: false }, limit: { type: 'string' } },
  });
  const [sessionId, ...extra] = positionals;
  if (sessionId === undefined || extra.length > 0) return usage(io, 'expected one session');
  const follow = !values['no-follow'];
  const after = values.after ?? (follow ? ONLY_NEW : '0');
  if (after !== ONLY_NEW && !isStreamId(after)) return usage(io, '--after must be a stream id such as 1700000000000-0, or 0 for the beginning');
  const limit = values.limit === undefined ? Number.POSITIVE_INFINITY : parseIntegerOption('limit', values.limit, TAIL_LIMIT);
  return withQueue(io, async (queue, redis) => {
    await printChildHeader((id) => queue.sessions.get(id), sessionId, io);
    // Where the stream ends now: --no-follow stops there (nothing at all: nothing to print).
    const end = follow ? null : await lastStreamId(redis, queue.layout, sessionId);
    if (!follow && end === null) return EXIT.ok;
    if (follow && values.after === undefined) io.stderr(`# following new events of ${sessionId} (--after 0 for those already in the stream)\n`);
    const stop = new AbortController();
    const onSignal = (): void => stop.abort();
    process.once('SIGINT', onSignal);
    let lines = 0;
    const quiet = follow ? setTimeout(() => io.stderr('# no events yet; waiting… (Ctrl-C to stop)\n'), TAIL_QUIET_HINT_MS) : null;
    try {
      for await (const item of queue.subscribe(sessionId, { after, signal: stop.signal })) {
        if (quiet !== null) clearTimeout(quiet);
        io.stdout(`${values.json ? JSON.stringify(item) : formatItem(item)}\n`);
        lines += 1;
        if (lines >= limit || (end !== null && item.kind === 'event' && compareStreamIds(item.id, end) >= 0)) break;
      }
      return EXIT.ok;
    } finally {
      if (quiet !== null) clearTimeout(quiet);
      process.removeListener('SIGINT', onSignal);
    }
  });
}

/** The id of the newest entry of the session's stream, or null when it has none. */
async function lastStreamId(redis: RedisConnection, queueName: QueueKeys, sessionId: string): Promise<string | null> {
  const entries = await redis.xrevrange(eventStreamKey(queueName, sessionId), '+', '-', 'COUNT', 1);
  return entries[0]?.[0] ?? null;
}

/** Orders two stream ids (`<ms>-<seq>`): negative, zero or positive. */
export function compareStreamIds(a: string, b: string): number {
  const [aMs, aSeq] = a.split('-').map(BigInt);
  const [bMs, bSeq] = b.split('-').map(BigInt);
  if (aMs !== bMs) return aMs! < bMs! ? -1 : 1;
  return aSeq === bSeq ? 0 : aSeq! < bSeq! ? -1 : 1;
}

/** `<id>  <type> [#<input seq>]  <payload as JSON>`, or a gap marker that cannot be mistaken for an event. */
export function formatItem(item: StreamItem): string {
  if (item.kind === 'gap') {
    const oldest = item.firstAvailable ?? 'none (the stream is gone)';
    return `--- GAP: events after ${item.after} are no longer in the stream (oldest retained: ${oldest}); rebuild with \`loopfleet history\` ---`;
  }
  const payload = Object.fromEntries(Object.entries(item.data).filter(([key]) => !ENVELOPE.has(key)));
  const input = item.data.inputSeq === null ? '' : ` #${item.data.inputSeq}`;
  return `${item.id}  ${item.type}${input}  ${JSON.stringify(payload)}`;
}

function usage(io: CliIo, problem: string): number {
  io.stderr(`loopfleet tail: ${problem}\nusage: ${USAGE}\n`);
  return EXIT.usage;
}
