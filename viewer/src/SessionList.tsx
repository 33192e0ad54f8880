import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { api, ApiError, withQuery } from './api';
import { costOf, formatAgo, formatTime, formatTokens } from './format';
import { linkClick, sessionHref } from './router';
import { StatusBadge } from './StatusBadge';
import type { Me, SessionPage, SessionSummary } from './types';

interface Filters {
  prefix: string;
  agent: string;
  tenant: string;
  status: string;
}

const STATUSES = ['', 'idle', 'running', 'waiting_for_input', 'waiting_for_children'];
const EMPTY: Filters = { prefix: '', agent: '', tenant: '', status: '' };

/** Sessions newest first, filtered on the server, paged with the API's cursor. */
export function SessionList({ me }: { me: Me }) {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const [sessions, setSessions] = useState<SessionSummary[]>([]);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(
    async (cursor: string | null, signal?: AbortSignal) => {
      setLoading(true);
      try {
        const page = await api<SessionPage>(
          'GET',
          withQuery('/v1/sessions', { prefix: filters.prefix, agent: filters.agent, tenant: filters.tenant, status: filters.status, limit: 50, cursor: cursor ?? undefined }),
          undefined,
          signal,
        );
        setSessions((current) => (cursor === null ? page.sessions : current.concat(page.sessions)));
        setNextCursor(page.nextCursor);
        setError(null);
      } catch (err) {
        if (signal?.aborted) return;
        setError(err instanceof ApiError ? `${err.code}: ${err.message}` : String(err));
      } finally {
        if (!signal?.aborted) setLoading(false);
      }
    },
    [filters],
  );

  useEffect(() => {
    const controller = new AbortController();
    void load(null, controller.signal);
    return () => controller.abort();
  }, [load]);

  const submit = (event: FormEvent): void => {
    event.preventDefault();
    setFilters(Object.assign({}, draft));
  };
  const field = (name: keyof Filters) => ({
    value: draft[name],
    onChange: (event: { target: { value: string } }) => setDraft(Object.assign({}, draft, { [name]: event.target.value })),
  });

  return (
    <section data-testid="session-list">
      <form className="filters" onSubmit={submit}>
        <input placeholder="Session id starts with…" {...field('prefix')} data-testid="filter-prefix" />
        <input placeholder="Agent" {...field('agent')} data-testid="filter-agent" />
        {me.scope === 'admin' || me.tenant === null ? <input placeholder="Tenant" {...field('tenant')} data-testid="filter-tenant" /> : null}
        <select {...field('status')} data-testid="filter-status">
          {STATUSES.map((status) => (
            <option key={status} value={status}>
              {status === '' ? 'any status' : status}
            </option>
          ))}
        </select>
        <button type="submit" data-testid="filter-apply">
          Search
        </button>
        <button type="button" className="secondary" onClick={() => void load(null)} data-testid="list-refresh">
          Refresh
        </button>
      </form>
      {error !== null && <p className="error">{error}</p>}
      <table className="sessions">
        <thead>
          <tr>
            <th>Session</th>
            <th>Agent</th>
            <th>Tenant</th>
            <th>Status</th>
            <th className="num">Inputs</th>
            <th className="num">Tokens</th>
            <th className="num">Cost</th>
            <th>Last activity</th>
          </tr>
        </thead>
        <tbody>
          {sessions.map((session) => (
            <tr key={session.id} data-testid="session-row" data-session-id={session.id}>
              <td className="id">
                <a href={sessionHref(session.id)} onClick={linkClick(sessionHref(session.id))}>
                  {session.id}
                </a>
                {session.parentSessionId !== null && (
                  <span className="muted small">
                    {' '}
                    ↳ child of{' '}
                    <a href={sessionHref(session.parentSessionId)} onClick={linkClick(sessionHref(session.parentSessionId))}>
                      {session.parentSessionId}
                    </a>
                  </span>
                )}
              </td>
              <td>{session.agent}</td>
              <td>{session.tenant}</td>
              <td>
                <StatusBadge status={session.status} />
              </td>
              <td className="num">{session.inputs}</td>
              <td className="num">{formatTokens(session.stats.totalTokens)}</td>
              <td className="num">{costOf(session.stats) ?? '—'}</td>
              <td title={formatTime(session.lastActivityAt)}>{formatAgo(session.lastActivityAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {sessions.length === 0 && !loading && <p className="muted">No sessions match.</p>}
      {nextCursor !== null && (
        <button type="button" onClick={() => void load(nextCursor)} disabled={loading} data-testid="list-more">
          More
        </button>
      )}
    </section>
  );
}
