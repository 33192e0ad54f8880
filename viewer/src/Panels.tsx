import { formatAgo, formatTime, formatTokens, costOf } from './format';
import { liveTokens, type LiveState } from './live-state';
import { linkClick, sessionHref } from './router';
import { StatusBadge } from './StatusBadge';
import type { ChildLink, InputRecord, SessionView, StreamEvent, Timer } from './types';

/** Agent, tenant, status, lease holder, tree and usage of the session. */
export function SessionFacts({ session, live, connection }: { session: SessionView; live: LiveState; connection: string }) {
  const stats = session.stats;
  const owner = session.lease?.owner ?? null;
  const cost = costOf(stats);
  return (
    <dl className="facts">
      <dt>Status</dt>
      <dd>
        <StatusBadge status={session.status} testId="session-status" />
      </dd>
      <dt>Agent</dt>
      <dd>{session.agent}</dd>
      {session.tenant !== undefined && (
        <>
          <dt>Tenant</dt>
          <dd>{session.tenant}</dd>
        </>
      )}
      <dt>Lease</dt>
      <dd data-testid="lease-holder">
        {owner === null ? <span className="muted">none</span> : owner}
        {owner !== null && session.lease?.expiresAt ? <span className="muted small"> until {formatTime(session.lease.expiresAt)}</span> : null}
      </dd>
      {session.parentSessionId ? (
        <>
          <dt>Parent</dt>
          <dd>
            <a href={sessionHref(session.parentSessionId)} onClick={linkClick(sessionHref(session.parentSessionId))} data-testid="parent-link">
              {session.parentSessionId}
            </a>
          </dd>
        </>
      ) : null}
      <dt>Usage</dt>
      <dd data-testid="usage">
        {stats === undefined ? (
          '—'
        ) : (
          <>
            {formatTokens(stats.totalTokens)} tokens ({formatTokens(stats.promptTokens)} in, {formatTokens(stats.completionTokens)} out) · {stats.rounds} rounds ·{' '}
            {stats.toolCalls} tool calls{cost !== null ? ` · ${cost}` : ''}
          </>
        )}
        {liveTokens(live) > 0 && <span className="muted small"> · live {formatTokens(liveTokens(live))}</span>}
      </dd>
      <dt>Updated</dt>
      <dd>{formatAgo(session.updatedAt)}</dd>
      <dt>Stream</dt>
      <dd className="small muted" data-testid="connection">
        {connection}
      </dd>
    </dl>
  );
}

/** Every input with its status, attempts and usage. */
export function InputsTable({ inputs, live }: { inputs: InputRecord[]; live: LiveState }) {
  return (
    <table className="inputs" data-testid="inputs-table">
      <thead>
        <tr>
          <th>#</th>
          <th>Kind</th>
          <th>Status</th>
          <th className="num">Tokens</th>
          <th>Accepted</th>
          <th>Error</th>
        </tr>
      </thead>
      <tbody>
        {inputs.map((input) => {
          const rounds = live.usage.get(input.seq);
          const liveTotal = rounds === undefined ? undefined : [...rounds.values()].reduce((a, b) => a + b, 0);
          return (
            <tr key={input.seq} data-testid="input-row" data-seq={input.seq} data-status={input.status}>
              <td>{input.seq}</td>
              <td>
                {input.kind}
                {input.mode !== 'queue' ? ` (${input.mode})` : ''}
              </td>
              <td>
                <StatusBadge status={input.status} />
                {input.attempts > 1 ? <span className="muted small"> ×{input.attempts}</span> : null}
              </td>
              <td className="num">{formatTokens(input.result?.usage?.totalTokens ?? liveTotal)}</td>
              <td title={formatTime(input.acceptedAt)}>{formatAgo(input.acceptedAt)}</td>
              <td className="small">{input.errorCode ?? ''}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** Child sessions, from `/children` and the live `subagent_*` events, linked to their pages. */
export function ChildrenList({ children, live }: { children: ChildLink[]; live: LiveState }) {
  const rows = new Map<string, { id: string; agent: string | null; status: string }>();
  for (const child of children) {
    const id = child.id ?? child.sessionId ?? child.childSessionId;
    if (id !== undefined) rows.set(id, { id, agent: child.agent ?? null, status: child.status ?? '' });
  }
  for (const child of live.children.values()) rows.set(child.id, Object.assign({}, rows.get(child.id), child));
  if (rows.size === 0) return <p className="muted small">No child sessions.</p>;
  return (
    <ul className="children" data-testid="children">
      {[...rows.values()].map((child) => (
        <li key={child.id}>
          <a href={sessionHref(child.id)} onClick={linkClick(sessionHref(child.id))} data-testid="child-link">
            {child.id}
          </a>{' '}
          <span className="muted small">
            {child.agent ?? ''} {child.status}
          </span>
        </li>
      ))}
    </ul>
  );
}

/** Armed timers and the firings seen live. */
export function TimersList({ timers, live }: { timers: Timer[]; live: LiveState }) {
  if (timers.length === 0 && live.timers.length === 0) return <p className="muted small">No timers.</p>;
  return (
    <ul className="timers" data-testid="timers">
      {timers.map((timer, index) => (
        <li key={String(timer.id ?? timer.timerId ?? index)}>
          {String(timer.id ?? timer.timerId ?? '?')} <span className="muted small">{timer.status ?? ''} due {formatTime(timer.dueAt ?? null)}</span>
        </li>
      ))}
      {live.timers.map((firing, index) => (
        <li key={`fired-${index}`} className="small">
          fired {firing.timerId} #{firing.fireCount}: {firing.outcome}
        </li>
      ))}
    </ul>
  );
}

/** Every event received, newest last, as the stream sent it. */
export function RawEvents({ events }: { events: StreamEvent[] }) {
  return (
    <div className="raw" data-testid="raw-events">
      {events.map((event) => (
        <details key={event.id || `${event.type}-${String(event.data.seq)}`} data-testid="raw-event" data-type={event.type}>
          <summary>
            <code>{event.id}</code> <strong>{event.type}</strong>
            {typeof event.data.inputSeq === 'number' ? <span className="muted small"> input {event.data.inputSeq}</span> : null}
          </summary>
          <pre>{JSON.stringify(event.data, null, 2)}</pre>
        </details>
      ))}
      {events.length === 0 && <p className="muted small">No events yet.</p>}
    </div>
  );
}
