import type { ListSessionsOptions, SessionSummary } from '../../core/ports/session-list.js';
import { SESSION_STATUSES, type SessionStatus } from '../../core/session-types.js';
import { EXIT, type CliIo } from '../cli-io.js';
import { paint, paintStatus } from '../colour.js';
import { CliUsageError, parseIntegerOption } from '../command-line.js';
import { withStore } from '../connect.js';
import { formatTable } from '../format-table.js';
import { SESSIONS_LIMIT } from '../limits.js';
import type { ParsedLine } from '../registry/index.js';

const HEADER = ['SESSION', 'TENANT', 'AGENT', 'STATUS', 'INPUTS', 'TOKENS', 'COST USD', 'LAST ACTIVITY'];

/**
 * `loopfleet sessions`: a page of sessions, newest first, filtered by tenant, agent, status and id
 * prefix (`SessionAdmin.list`, from Postgres). When more follow, stderr gives the `--cursor` of the
 * next page; `--json` prints the page as one object with `nextCursor`.
 */
export async function sessionsCommand(_args: string[], io: CliIo, parsed: ParsedLine): Promise<number> {
  const options = parsed.options as { tenant?: string; agent?: string; status?: string; prefix?: string; limit?: string; cursor?: string; json?: boolean };
  const query: ListSessionsOptions = {};
  if (options.tenant !== undefined) query.tenant = options.tenant;
  if (options.agent !== undefined) query.agent = options.agent;
  if (options.status !== undefined) query.status = sessionStatus(options.status);
  if (options.prefix !== undefined) query.idPrefix = options.prefix;
  if (options.limit !== undefined) query.limit = parseIntegerOption('limit', options.limit, SESSIONS_LIMIT);
  if (options.cursor !== undefined) query.cursor = options.cursor;
  return withStore(io, async ({ store }) => {
    const page = await store.listSessions(query);
    if (options.json === true) {
      io.stdout(`${JSON.stringify(page)}\n`);
      return EXIT.ok;
    }
    io.stdout(page.sessions.length === 0 ? 'no sessions\n' : formatSessions(page.sessions, io));
    if (page.nextCursor !== null) io.stderr(`# more: loopfleet sessions --cursor ${page.nextCursor}\n`);
    return EXIT.ok;
  });
}

function sessionStatus(raw: string): SessionStatus {
  if ((SESSION_STATUSES as readonly string[]).includes(raw)) return raw as SessionStatus;
  throw new CliUsageError(`--status must be one of ${SESSION_STATUSES.join(', ')}; got ${JSON.stringify(raw)}`);
}

/** The page as a table (the status coloured on a terminal). */
export function formatSessions(sessions: readonly SessionSummary[], io: CliIo): string {
  const p = paint(io);
  const rows = sessions.map((s) => [s.id, s.tenant, s.agent, s.status, String(s.inputs), String(s.stats.totalTokens), s.stats.costUsd.toFixed(6), s.lastActivityAt.toISOString()]);
  const table = formatTable(HEADER, rows);
  // Padded first, coloured after: escape codes would throw the column widths off.
  return table
    .split('\n')
    .map((line, index) => (index === 0 || line === '' ? line : line.replace(/ (idle|running|waiting_for_input|waiting_for_children) /, (_, status: string) => ` ${paintStatus(p, status)} `)))
    .join('\n');
}
