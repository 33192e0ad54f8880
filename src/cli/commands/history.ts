import { contentText, type StoredMessage } from '../../core/messages.js';
import { SessionQueue } from '../../producer/session-queue.js';
import { EXIT, type CliIo } from '../cli-io.js';
import { parseCommandLine } from '../command-line.js';

const USAGE = 'loopfleet history <session> [--json] [--all]';

/**
 * `loopfleet history <session>`: the session's messages in order, from Postgres. `--all` includes
 * messages folded away by compaction; `--json` prints one stored message as JSON a line.
 */
export async function historyCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({
    args,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false }, all: { type: 'boolean', default: false } },
  });
  const [sessionId, ...extra] = positionals;
  if (sessionId === undefined || extra.length > 0) {
    io.stderr(`loopfleet history: expected one session\nusage: ${USAGE}\n`);
    return EXIT.usage;
  }
  const queue = SessionQueue.fromEnv(io.env);
  try {
    const messages = await queue.history(sessionId, { includeCompacted: values.all });
    for (const row of messages) io.stdout(`${values.json ? JSON.stringify(row) : formatMessage(row)}\n`);
    return EXIT.ok;
  } finally {
    await queue.close();
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
