import type { RunOutcome } from '../../core/session-types.js';
import { INPUT_MODES, type InputMode } from '../../core/session-types.js';
import type { InputHandle } from '../../producer/input-handle.js';
import type { InputOutcome } from '../../producer/input-outcome.js';
import { cliConfig, serverAddress, withQueue } from '../connect.js';
import { INPUT_ID_PATTERN } from '../../fleet/input-id.js';
import { AGENT_NAME_RULE } from '../../fleet/agent-name.js';
import { EXIT, type CliIo } from '../cli-io.js';
import { CliUsageError, parseCommandLine } from '../command-line.js';

const USAGE = 'loopfleet send <session> <text>|- [--follow] [--mode queue|steer|interrupt] [--input-id <id>] [--agent <name>] [--json]';

/**
 * Exit code of `send --follow` for each terminal status, so scripts can branch on the outcome
 * without parsing output. `failed` shares the generic failure code.
 */
export const FOLLOW_EXIT: Readonly<Record<RunOutcome, number>> = Object.freeze({
  completed: 0,
  failed: 1,
  waiting_for_input: 10,
  hit_round_limit: 11,
  budget_exceeded: 12,
  degraded: 13,
  cancelled: 14,
  // Never an input's end (a parked input finishes later), so never an exit code; here for the type.
  waiting_for_children: 15,
});

/** Exit code when Ctrl-C stops following (128 + SIGINT); the input itself keeps running. */
const INTERRUPTED = 130;

/**
 * `loopfleet send <session> <text>`: accepts a user message and prints `accepted <session> seq <n>`.
 * With `--follow`, streams the reply text to stdout as it arrives and exits with {@link FOLLOW_EXIT}.
 */
export async function sendCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({
    args,
    allowPositionals: true,
    options: { follow: { type: 'boolean', default: false }, mode: { type: 'string' }, 'input-id': { type: 'string' }, agent: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  const [sessionId, typed, ...extra] = positionals;
  if (sessionId === undefined || typed === undefined || extra.length > 0) return usage(io, 'expected a session and a text');
  const text = typed === '-' ? await readText(io) : typed;
  // An empty message is refused by the providers (Anthropic), so it would only fail on the worker.
  if (text.trim() === '') return usage(io, 'the text must not be empty');
  const mode = values.mode;
  if (mode !== undefined && !(INPUT_MODES as readonly string[]).includes(mode)) return usage(io, `--mode must be one of ${INPUT_MODES.join(', ')}`);
  const inputId = values['input-id'];
  if (inputId !== undefined && !INPUT_ID_PATTERN.test(inputId)) return usage(io, '--input-id must be 1 to 200 of A-Z a-z 0-9 _ . : @ / -');
  const agent = values.agent;
  if (agent !== undefined && !AGENT_NAME_RULE.test(agent)) return usage(io, '--agent must be 1 to 64 of A-Z a-z 0-9 _ . -');
  return withQueue(io, async (queue) => {
    const data = Object.assign({ sessionId, input: text }, agent !== undefined ? { agent } : {});
    const options = Object.assign({}, mode !== undefined ? { mode: mode as InputMode } : {}, inputId !== undefined ? { inputId } : {});
    const handle = await queue.add('send', data, options);
    return acceptedThenFollow(handle, { follow: values.follow, json: values.json }, io);
  });
}

/**
 * Prints `accepted <session> seq <n>` (`--json`: `{"sessionId","seq","duplicate"}`), then, with
 * `follow`, streams the reply and returns its exit code ({@link FOLLOW_EXIT}). With both, the JSON
 * is the outcome alone, at the end.
 */
export async function acceptedThenFollow(handle: InputHandle, how: { follow: boolean; json: boolean }, io: CliIo): Promise<number> {
  warnIfNotWoken(handle, io);
  if (how.follow && how.json) {
    const outcome = await handle.result();
    io.stdout(`${JSON.stringify(Object.assign({ sessionId: handle.sessionId, seq: handle.seq }, outcome))}\n`);
    return FOLLOW_EXIT[outcome.status];
  }
  if (how.json) io.stdout(`${JSON.stringify({ sessionId: handle.sessionId, seq: handle.seq, duplicate: handle.duplicate })}\n`);
  else io.stdout(`accepted ${handle.sessionId} seq ${handle.seq}${handle.duplicate ? ' (duplicate)' : ''}\n`);
  return how.follow ? follow(handle, io) : EXIT.ok;
}

/**
 * One stderr line when an input (or a timer) is stored but its wake-up job is not queued: Redis went
 * away after the connect. `then` says what the sweeper does about it.
 */
export function warnIfNotWoken(handle: { wakeQueued: boolean }, io: CliIo, then = 'the sweeper will run it'): void {
  if (handle.wakeQueued) return;
  const address = serverAddress(cliConfig(io.env).redisUrl, 6379);
  io.stderr(`warning: stored, but the wake-up could not be queued (Redis at ${address}); ${then}\n`);
}

/** The text of `send <session> -`: all of stdin, without the final newline a shell pipe adds. */
async function readText(io: CliIo): Promise<string> {
  if (io.readStdin === undefined) throw new CliUsageError('"-" reads the text from stdin, and there is none here');
  return (await io.readStdin()).replace(/\r?\n$/, '');
}

/** Prints the input's text deltas as they arrive; notices go to stderr so stdout is the reply alone. */
async function follow(handle: InputHandle, io: CliIo): Promise<number> {
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once('SIGINT', onSignal);
  let streamed = false;
  try {
    for await (const item of handle.events({ signal: stop.signal })) {
      if (item.kind === 'gap') {
        io.stderr('\n[some events were lost from the stream; the outcome is read from Postgres]\n');
        continue;
      }
      const data = item.data;
      if (item.type === 'stream_delta' && typeof data.text === 'string') {
        io.stdout(data.text);
        streamed = true;
      } else if (item.type === 'stream_discarded') {
        io.stderr('\n[the model call was retried: the partial text above is void]\n');
      } else if (item.type === 'input_resumed') {
        io.stderr('\n[a worker was lost: the input continues on another one]\n');
      } else if (item.type === 'user_input_requested') {
        io.stderr(`\n[question ${String(data.interactionId)}: ${String(data.prompt)}]\n[answer with: loopfleet submit-input ${handle.sessionId} ${String(data.interactionId)} <value>]\n`);
      }
    }
    if (stop.signal.aborted) {
      io.stderr(`\n[stopped following; input ${handle.seq} keeps running]\n`);
      return INTERRUPTED;
    }
    // From Postgres, not from the followed input_finished: a follower may take entries from its tail
    // channel, on which anyone allowed to PUBLISH can announce a made-up finish (docs/invariants.md).
    return report(await handle.result(), streamed, io);
  } finally {
    process.removeListener('SIGINT', onSignal);
  }
}

function report(outcome: InputOutcome, streamed: boolean, io: CliIo): number {
  if (!streamed && outcome.finalText !== '') io.stdout(outcome.finalText);
  if (streamed || outcome.finalText !== '') io.stdout('\n');
  if (outcome.error !== null) io.stderr(`[${outcome.error.code}] ${outcome.error.message}\n`);
  io.stderr(`status ${outcome.status}\n`);
  return FOLLOW_EXIT[outcome.status];
}

function usage(io: CliIo, problem: string): number {
  io.stderr(`loopfleet send: ${problem}\nusage: ${USAGE}\n`);
  return EXIT.usage;
}
