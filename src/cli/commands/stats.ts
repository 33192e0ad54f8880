import type { InputRecord } from '../../core/session-types.js';
import type { SessionStatsReport } from '../../producer/session-stats.js';
import type { ClientStore } from '../../core/ports/client-store.js';
import { assertSessionId } from '../../fleet/session-id.js';
import { readSessionStats } from '../../producer/session-stats.js';
import { withStore } from '../connect.js';
import { EXIT, type CliIo } from '../cli-io.js';
import { parseCommandLine } from '../command-line.js';

const USAGE = 'loopfleet stats <session> [--json]';

/** Inputs read at a time (the store's largest page). */
const INPUT_PAGE = 1000;

/** One input as `stats` shows it: which agent, in which version, ran it (null: not run yet, or before agents). */
export interface InputLine {
  seq: number;
  kind: string;
  status: string;
  agent: { name: string; version: string } | null;
}

/**
 * `loopfleet stats <session>`: the session's agent, status, cumulative counters and inputs by status,
 * then one line per input with the agent (`name@version`) that ran it. `--json`: the whole report as
 * one JSON object, the inputs under `runs`. Not found (exit 3): no such session.
 */
export async function statsCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({ args, allowPositionals: true, options: { json: { type: 'boolean', default: false } } });
  const [sessionId, ...extra] = positionals;
  if (sessionId === undefined || extra.length > 0) {
    io.stderr(`loopfleet stats: expected one session\nusage: ${USAGE}\n`);
    return EXIT.usage;
  }
  const id = assertSessionId(sessionId);
  return withStore(io, async ({ store }) => {
    const report = await readSessionStats(store, id);
    const runs = await inputLines(store, id);
    io.stdout(values.json ? `${JSON.stringify(Object.assign({}, report, { runs }))}\n` : formatStats(report, runs));
    return EXIT.ok;
  });
}

/** Every input of the session, page by page. */
export async function inputLines(store: ClientStore, sessionId: string): Promise<InputLine[]> {
  const lines: InputLine[] = [];
  for (let afterSeq = 0; ; ) {
    const page = await store.listInputs(sessionId, { afterSeq, limit: INPUT_PAGE });
    lines.push(...page.map(inputLine));
    if (page.length < INPUT_PAGE) return lines;
    afterSeq = page.at(-1)!.seq;
  }
}

function inputLine(input: InputRecord): InputLine {
  const agent = input.result?.agent;
  return { seq: input.seq, kind: input.kind, status: input.status, agent: agent === undefined ? null : { name: agent.name, version: agent.version } };
}

/** The report as a few lines, then `#<seq> <kind> <status> <agent@version | ->` per input. */
export function formatStats(report: SessionStatsReport, runs: readonly InputLine[]): string {
  const { totals, inputs } = report;
  const byStatus = (['pending', 'running', 'waiting', 'done', 'failed', 'cancelled'] as const).map((status) => `${status} ${inputs[status]}`).join(', ');
  const { tree } = report;
  const lines = [
    `session ${report.sessionId}  agent ${report.agent}  status ${report.status}`,
    `inputs ${inputs.total} (${byStatus})`,
    `rounds ${totals.rounds}  llm calls ${totals.llmCalls}  tool calls ${totals.toolCalls}`,
    `tokens ${totals.totalTokens} (prompt ${totals.promptTokens}, completion ${totals.completionTokens}, cache read ${totals.cachedTokens}, cache write ${totals.cacheWriteTokens}, reasoning ${totals.reasoningTokens})`,
    ...(tree.parentSessionId === null ? [] : [`child of ${tree.parentSessionId}  depth ${tree.depth}  root ${tree.rootSessionId}`]),
    ...(tree.children.length === 0 ? [] : [`children ${tree.children.length}`, ...tree.children.map((child) => `  ${child.sessionId} ${child.agent} ${child.status} (call ${child.toolCallId})`)]),
    ...runs.map((run) => `#${run.seq} ${run.kind} ${run.status} ${run.agent === null ? '-' : `${run.agent.name}@${run.agent.version}`}`),
  ];
  return `${lines.join('\n')}\n`;
}
