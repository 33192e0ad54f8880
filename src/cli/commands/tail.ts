import type { StreamItem } from '../../fleet/fleet-events.js';
import { printChildHeader } from './child-header.js';
import { isStreamId, ONLY_NEW } from '../../events/stream-id.js';
import { SessionQueue } from '../../producer/session-queue.js';
import { EXIT, type CliIo } from '../cli-io.js';
import { parseCommandLine, parseIntegerOption } from '../command-line.js';

const USAGE = 'loopfleet tail <session> [--after <id>] [--json] [--limit <n>]';

/** Fields of every entry's `data` that the line already shows (or that never change within a session). */
const ENVELOPE = new Set(['sessionId', 'inputSeq', 'seq']);

/** Accepted `--limit` values (the help states the range). */
export const TAIL_LIMIT = { min: 1, max: 1_000_000 } as const;

/**
 * `loopfleet tail <session>`: prints the session's events as they arrive, one a line, until Ctrl-C.
 * `--after <id>` resumes after a stream id (`0`: from the oldest retained event; default: only new
 * ones); `--json` prints each item as JSON; `--limit <n>` exits after n lines (scripts and tests).
 */
export async function tailCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({
    args,
    allowPositionals: true,
    options: { after: { type: 'string', default: ONLY_NEW }, json: { type: 'boolean', default: false }, limit: { type: 'string' } },
  });
  const [sessionId, ...extra] = positionals;
  if (sessionId === undefined || extra.length > 0) return usage(io, 'expected one session');
  if (values.after !== ONLY_NEW && !isStreamId(values.after)) return usage(io, "--after must be a stream id such as 1700000000000-0, or 0 for the beginning");
  const limit = values.limit === undefined ? null : parseIntegerOption('limit', values.limit, TAIL_LIMIT);
  const queue = SessionQueue.fromEnv(io.env);
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once('SIGINT', onSignal);
  try {
    await printChildHeader(queue, sessionId, io);
    let lines = 0;
    for await (const item of queue.subscribe(sessionId, { after: values.after, signal: stop.signal })) {
      io.stdout(`${values.json ? JSON.stringify(item) : formatItem(item)}\n`);
      lines += 1;
      if (limit !== null && lines >= limit) break;
    }
    return EXIT.ok;
  } finally {
    process.removeListener('SIGINT', onSignal);
    await queue.close();
  }
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
