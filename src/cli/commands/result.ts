import { InputNotFoundError, SessionNotFoundError } from '../../core/errors/index.js';
import type { ClientStore } from '../../core/ports/client-store.js';
import { assertSessionId } from '../../fleet/session-id.js';
import { outcomeFromRecord, type InputOutcome } from '../../producer/input-outcome.js';
import { EXIT, type CliIo } from '../cli-io.js';
import { paint, paintStatus } from '../colour.js';
import { parseIntegerOption } from '../command-line.js';
import { withQueue, withStore } from '../connect.js';
import { parseDuration } from '../duration.js';
import { RESULT_WAIT_DEFAULT_MS, RESULT_WAIT_MS } from '../limits.js';
import type { ParsedLine } from '../registry/index.js';

/**
 * `loopfleet result <session> <seq> [--wait [duration]]`: one input's outcome. Without `--wait`,
 * read once from Postgres (no Redis): a settled input prints its outcome, one still to run its status.
 * With it, waits up to the duration (default 5m) for the outcome. Not found (exit 3): no such
 * session or input. A wait that runs out exits 1.
 */
export async function resultCommand(_args: string[], io: CliIo, parsed: ParsedLine): Promise<number> {
  const sessionId = assertSessionId(parsed.operands[0]);
  const seq = parseIntegerOption('seq', parsed.operands[1] ?? '', { min: 1, max: Number.MAX_SAFE_INTEGER });
  const json = parsed.options.json === true;
  const wait = parsed.options.wait as string | boolean | undefined;
  if (wait === undefined) {
    return withStore(io, async ({ store }) => {
      const read = await readOnce(store, sessionId, seq);
      if (read.outcome === null) {
        io.stdout(json ? `${JSON.stringify({ sessionId, seq, status: read.status, settled: false })}\n` : `#${seq} ${read.status} (not finished; --wait to wait for it)\n`);
        return EXIT.ok;
      }
      return print(sessionId, seq, read.outcome, json, io);
    });
  }
  const timeoutMs = typeof wait === 'string' ? parseDuration('wait', wait, RESULT_WAIT_MS, 's') : RESULT_WAIT_DEFAULT_MS;
  return withQueue(io, async (queue) => {
    if ((await queue.sessions.get(sessionId)) === null) throw new SessionNotFoundError(`session ${sessionId} does not exist`, { details: { sessionId } });
    return print(sessionId, seq, await queue.result(sessionId, seq, { timeoutMs }), json, io);
  });
}

/** The input's outcome when it has settled, else its status; not-found errors for a missing session or input. */
async function readOnce(store: ClientStore, sessionId: string, seq: number): Promise<{ status: string; outcome: InputOutcome | null }> {
  const record = await store.getInput(sessionId, seq);
  if (record !== null) return { status: record.status, outcome: outcomeFromRecord(record) };
  if ((await store.getSession(sessionId)) === null) throw new SessionNotFoundError(`session ${sessionId} does not exist`, { details: { sessionId } });
  throw new InputNotFoundError(`session ${sessionId} has no input ${seq}`, { details: { sessionId, seq } });
}

function print(sessionId: string, seq: number, outcome: InputOutcome, json: boolean, io: CliIo): number {
  if (json) {
    io.stdout(`${JSON.stringify(Object.assign({ sessionId, seq, settled: true }, outcome))}\n`);
    return EXIT.ok;
  }
  const p = paint(io);
  const { usage } = outcome;
  const lines = [`#${seq} ${paintStatus(p, outcome.status)}  rounds ${outcome.rounds}  tool calls ${outcome.toolCalls}  tokens ${usage.totalTokens}  cost ${usage.costUsd.toFixed(6)} USD`];
  if (outcome.error !== null) lines.push(p.red(`[${outcome.error.code}] ${outcome.error.message}`));
  if (outcome.finalText !== '') lines.push(outcome.finalText);
  io.stdout(`${lines.join('\n')}\n`);
  return EXIT.ok;
}
