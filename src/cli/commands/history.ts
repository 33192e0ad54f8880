import { contentText, type StoredMessage } from '../../core/messages.js';
import { printChildHeader } from './child-header.js';
import { SessionNotFoundError } from '../../core/errors/index.js';
import type { ClientStore } from '../../core/ports/client-store.js';
import { assertSessionId } from '../../fleet/session-id.js';
import { withStore } from '../connect.js';
import { HISTORY_LIMIT, HISTORY_PAGE } from '../limits.js';

export { HISTORY_LIMIT, HISTORY_PAGE };
import { EXIT, type CliIo } from '../cli-io.js';
import { parseCommandLine, parseIntegerOption } from '../command-line.js';

const USAGE = 'loopfleet history <session> [--json] [--all] [--after <seq>] [--limit <n>]';

/** Accepted `--after` values: message seqs, 0 for the beginning. */
const HISTORY_AFTER = { min: 0, max: Number.MAX_SAFE_INTEGER } as const;

/**
 * `loopfleet history <session>`: the session's messages in order, from Postgres, read
 * {@link HISTORY_PAGE} at a time. `--all` includes messages folded away by compaction; `--json`
 * prints one stored message as JSON a line; `--after <seq>` starts after that message seq;
 * `--limit <n>` stops after n messages.
 */
export async function historyCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({
    args,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false }, all: { type: 'boolean', default: false }, after: { type: 'string' }, limit: { type: 'string' } },
  });
  const [sessionId, ...extra] = positionals;
  if (sessionId === undefined || extra.length > 0) {
    io.stderr(`loopfleet history: expected one session\nusage: ${USAGE}\n`);
    return EXIT.usage;
  }
  const afterSeq = values.after === undefined ? 0 : parseIntegerOption('after', values.after, HISTORY_AFTER);
  const limit = values.limit === undefined ? Number.POSITIVE_INFINITY : parseIntegerOption('limit', values.limit, HISTORY_LIMIT);
  const id = assertSessionId(sessionId);
  return withStore(io, async ({ store }) => {
    await printChildHeader((session) => store.getSession(session), id, io);
    const print = (row: StoredMessage): void => io.stdout(`${values.json ? JSON.stringify(row) : formatMessage(row)}\n`);
    await forEachPage(store, { sessionId: id, includeCompacted: values.all, afterSeq, limit }, (page) => page.forEach(print));
    return EXIT.ok;
  });
}

/**
 * Reads the history page by page, handing each to `onPage`, until `limit` messages or a short page.
 * Not a snapshot: a message compacted while the pages are read is shown as it was when its page was.
 */
async function forEachPage(
  store: ClientStore,
  read: { sessionId: string; includeCompacted: boolean; afterSeq: number; limit: number },
  onPage: (page: StoredMessage[]) => void,
): Promise<void> {
  let { afterSeq } = read;
  let left = read.limit;
  while (left > 0) {
    const size = Math.min(HISTORY_PAGE, left);
    const page = await store.loadHistory(read.sessionId, { includeCompacted: read.includeCompacted, afterSeq, limit: size });
    // An empty first page is ambiguous: a new session, or a mistyped id that should not pass silently.
    if (page.length === 0 && left === read.limit && (await store.getSession(read.sessionId)) === null) {
      throw new SessionNotFoundError(`session ${read.sessionId} does not exist`, { details: { sessionId: read.sessionId } });
    }
    onPage(page);
    const last = page.at(-1);
    if (last === undefined || page.length < size) return;
    left -= page.length;
    afterSeq = last.seq;
  }
}

/** `<seq> [#<input>] <role>: <text>`, with tool calls and compaction marked. */
function formatMessage(row: StoredMessage): string {
  const { message } = row;
  const input = row.inputSeq === null ? '' : ` #${row.inputSeq}`;
  const marks = [row.kind === 'message' ? null : row.kind, row.state === 'compacted' ? 'compacted' : null].filter((mark) => mark !== null);
  const head = `${row.seq}${input} ${message.role}${marks.length > 0 ? ` (${marks.join(', ')})` : ''}`;
  if (message.role === 'tool') return `${head} ${message.name} [${message.toolCallId}]: ${contentText(message.content)}`;
  const calls = message.role === 'assistant' ? (message.toolCalls ?? []).map((call) => `\n    -> ${call.name}(${call.arguments}) [${call.id}]`).join('') : '';
  return `${head}: ${contentText(message.content)}${calls}`;
}
