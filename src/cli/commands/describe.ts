import { SessionNotFoundError } from '../../core/errors/index.js';
import type { ClientStore } from '../../core/ports/client-store.js';
import type { InputRecord, SessionRecord } from '../../core/session-types.js';
import { assertSessionId } from '../../fleet/session-id.js';
import { readSessionStats, type SessionStatsReport } from '../../producer/session-stats.js';
import { EXIT, type CliIo } from '../cli-io.js';
import { paint, paintStatus } from '../colour.js';
import { withStore } from '../connect.js';
import type { ParsedLine } from '../registry/index.js';

/** Inputs read at a time while looking for the last failure (the store's largest page). */
const INPUT_PAGE = 1000;

/** What `describe` shows: the session, its counters, and its latest failed input's error. */
export interface SessionDescription {
  session: Omit<SessionRecord, 'systemPrompt'> & { hasSystemPrompt: boolean };
  stats: SessionStatsReport;
  lastError: { seq: number; code: string | null; message: string | null } | null;
}

/**
 * `loopfleet describe <session>`: status, agent, tenant, lease holder, inputs by status, usage, cost
 * and the last error, from Postgres. Not found (exit 3): no such session.
 */
export async function describeCommand(_args: string[], io: CliIo, parsed: ParsedLine): Promise<number> {
  const sessionId = assertSessionId(parsed.operands[0]);
  return withStore(io, async ({ store }) => {
    const record = await store.getSession(sessionId);
    if (record === null) throw new SessionNotFoundError(`session ${sessionId} does not exist`, { details: { sessionId } });
    const description = await describe(store, record);
    io.stdout(parsed.options.json === true ? `${JSON.stringify(description)}\n` : formatDescription(description, io));
    return EXIT.ok;
  });
}

async function describe(store: ClientStore, record: SessionRecord): Promise<SessionDescription> {
  const { systemPrompt, ...session } = record;
  const stats = await readSessionStats(store, record.id);
  return { session: Object.assign(session, { hasSystemPrompt: systemPrompt !== null }), stats, lastError: await lastFailure(store, record.id) };
}

/** The failed input with the highest seq, paging through the failed ones. */
async function lastFailure(store: ClientStore, sessionId: string): Promise<SessionDescription['lastError']> {
  let last: InputRecord | undefined;
  for (let afterSeq = 0; ; ) {
    const page = await store.listInputs(sessionId, { afterSeq, limit: INPUT_PAGE, status: 'failed' });
    last = page.at(-1) ?? last;
    if (page.length < INPUT_PAGE) break;
    afterSeq = page.at(-1)!.seq;
  }
  return last === undefined ? null : { seq: last.seq, code: last.errorCode, message: last.errorMessage };
}

/** A few labelled lines. */
export function formatDescription(d: SessionDescription, io: CliIo): string {
  const p = paint(io);
  const { session, stats } = d;
  const { totals, inputs } = stats;
  const lease = session.lease.owner === null ? 'none' : `${session.lease.owner} (until ${session.lease.expiresAt?.toISOString() ?? '?'})`;
  const byStatus = (['pending', 'running', 'waiting', 'done', 'failed', 'cancelled'] as const).map((status) => `${status} ${inputs[status]}`).join(', ');
  const lines = [
    `${p.bold('session')}   ${session.id}`,
    `${p.bold('status')}    ${paintStatus(p, session.status)}${session.cancelRequestedAt === null ? '' : ' (cancel requested)'}`,
    `${p.bold('agent')}     ${session.agent}`,
    `${p.bold('tenant')}    ${session.tenant}`,
    `${p.bold('lease')}     ${lease}`,
    `${p.bold('inputs')}    ${inputs.total} (${byStatus})`,
    `${p.bold('usage')}     ${totals.rounds} rounds, ${totals.llmCalls} llm calls, ${totals.toolCalls} tool calls, ${totals.totalTokens} tokens (prompt ${totals.promptTokens}, completion ${totals.completionTokens})`,
    `${p.bold('cost')}      ${totals.costUsd.toFixed(6)} USD`,
    `${p.bold('created')}   ${session.createdAt.toISOString()}  last change ${session.updatedAt.toISOString()}`,
  ];
  if (session.parentSessionId !== null) lines.push(`${p.bold('parent')}    ${session.parentSessionId} (depth ${session.depth}, root ${session.rootSessionId})`);
  if (stats.tree.children.length > 0) lines.push(`${p.bold('children')}  ${stats.tree.children.length}`);
  lines.push(`${p.bold('last error')} ${d.lastError === null ? 'none' : p.red(`#${d.lastError.seq} [${d.lastError.code ?? '?'}] ${d.lastError.message ?? ''}`)}`);
  return `${lines.join('\n')}\n`;
}
