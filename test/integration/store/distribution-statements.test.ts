import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { SESSION_TABLES } from './fixtures/session-tables.js';

/**
 * Every statement the fleet sends on its hot path reaches each session's rows through the session id
 * (docs/postgres-distribution.md): one session, or a batch of them (`= ANY`, a `VALUES` or
 * `jsonb_to_recordset` list joined on the id). Checked on the plans, not the text: every statement a
 * real fleet sent while it ran inputs (a tool round, a tenant cap, a budget, steering, a cancel, a
 * timer, the sweeper, the producer's reads) is explained with sequential scans off, and every scan of
 * a session table must be an index scan whose condition is on the session id column (what Citus needs
 * to route it to one shard per session). The statements that scan across sessions by design are
 * listed with their reason; anything else found is a failure.
 */


/** Statements that read across sessions by design (a fragment of their text → why). Off the per-input path. */
const CROSS_SESSION_STATEMENTS: Record<string, string> = {
  'lease_expires_at IS NULL OR s.lease_expires_at': "the sweeper's scan for sessions with open inputs and no live lease (every SWEEP_EVERY_MS, one worker)",
  'FROM timers': "the sweeper's scan for overdue armed timers (partial index on due_at)",
  'lease_expires_at > now()': "a capped tenant's count of its sessions holding a lease (only for tenants with maxConcurrentInputs)",
  'parent_session_id = $1': "a session's children by parent id (listChildren, the cancel and delete cascades): each child is another session",
};

interface Captured {
  text: string;
  values: unknown[] | undefined;
}

/** Whether `text` holds a condition on `column` (`column = …`, `column = ANY (…)`), qualified or not. */
function onColumn(text: string, column: string): boolean {
  return new RegExp(`(^|[\\s(.])${column} = `).test(text);
}

/** The index conditions under a bitmap heap scan (through BitmapOr and BitmapAnd). */
function bitmapConditions(plan: Record<string, unknown>): string[] {
  const children = (plan['Plans'] as Record<string, unknown>[] | undefined) ?? [];
  return children.flatMap((child) => (child['Index Cond'] === undefined ? bitmapConditions(child) : [String(child['Index Cond'])]));
}

/**
 * Scans of session tables in a plan (EXPLAIN VERBOSE, JSON) that do not reach rows by session id.
 * A scan is keyed when its index condition is on the session id column, or when it feeds a hashed
 * subplan (a correlated `EXISTS … WHERE x.session_id = outer.session_id` the planner turned into one
 * hash of the candidates: the statement still names the session) whose first output is that column.
 */
function offKeyScans(plan: Record<string, unknown>, whole: string, found: string[] = [], joinFilter = ''): string[] {
  const relation = plan['Relation Name'] as string | undefined;
  const type = plan['Node Type'] as string;
  // A ModifyTable writes the rows its child plan found: the child is checked.
  if (relation !== undefined && relation in SESSION_TABLES && type !== 'ModifyTable') {
    const column = SESSION_TABLES[relation]!;
    const cond = type === 'Bitmap Heap Scan' ? bitmapConditions(plan).join(' ') : String(plan['Index Cond'] ?? '');
    const subplan = plan['Subplan Name'] as string | undefined;
    const output = (plan['Output'] as string[] | undefined) ?? [];
    // Joined to the batch on the session id (`x.session_id = batch.session_id`), the condition the
    // planner of a tiny table applies as a join filter over a whole partial index.
    const alias = plan['Alias'] as string | undefined;
    const joinedOnKey = alias !== undefined && new RegExp(`\\b${alias}\\.${column} = |= ${alias}\\.${column}\\b`).test(joinFilter);
    const hashedOnKey = subplan !== undefined && whole.includes(`hashed ${subplan}`) && new RegExp(`(^|\\.)${column}$`).test(output[0] ?? '');
    if (type === 'Seq Scan' || (!onColumn(cond, column) && !hashedOnKey && !joinedOnKey)) found.push(`${type} on ${relation} (${cond || 'no condition'})`);
  }
  const filter = String(plan['Join Filter'] ?? '');
  for (const child of (plan['Plans'] as Record<string, unknown>[] | undefined) ?? []) offKeyScans(child, whole, found, filter);
  return found;
}

describe('hot statements reach session rows by session id', () => {
  let fleet: FleetFixture;
  let queue: SessionQueue;
  const captured = new Map<string, Captured>();
  const query = pg.Client.prototype.query;

  beforeAll(async () => {
    fleet = await FleetFixture.create('dist_statements');
    // Every statement any client of this process sends (the worker's pool, the producer's, the fixture's).
    pg.Client.prototype.query = function (this: pg.Client, config: unknown, values?: unknown, ...rest: unknown[]) {
      const text = typeof config === 'string' ? config : (config as { text?: string } | null)?.text;
      const params = Array.isArray(values) ? values : (config as { values?: unknown[] } | null)?.values;
      if (typeof text === 'string' && !captured.has(text)) captured.set(text, { text, values: params });
      return (query as (...args: unknown[]) => unknown).call(this, config, values, ...rest);
    } as typeof query;
    queue = SessionQueue.fromEnv(fleet.env);
    await fleet.startWorker({ settings: { sweepEveryMs: 300, sweepGraceMs: 200 } });
    await queue.tenants.set('capped', { maxConcurrentInputs: 1 });
    await queue.budgets.set({ scope: 'tenant', tenant: 'capped', unit: 'tokens', period: 'day', limit: 10_000_000 });
    for (const [i, sessionId] of ['dist-a', 'dist-b', 'dist-c'].entries()) {
      await queue.add('send', { sessionId, input: '/tool current_time {}', tenant: i === 0 ? 'capped' : 'default' });
      await queue.add('send', { sessionId, input: 'and then?', mode: i === 1 ? 'steer' : 'queue' });
    }
    await queue.add('timer', { sessionId: 'dist-timer', delayMs: 0, note: 'wake', timerId: 'wake' });
    await fleet.store.acceptInput({ sessionId: 'dist-unkicked', kind: 'send', payload: { input: 'never kicked' }, maxBytes: 1 << 20 });
    for (const sessionId of ['dist-a', 'dist-b', 'dist-c']) await fleet.waitForSessionFinished(sessionId, 2);
    await fleet.waitForSessionIdle('dist-timer', 1);
    await fleet.waitForSessionIdle('dist-unkicked', 1);
    await queue.cancel('dist-a');
    await queue.stats('dist-a');
    await queue.history('dist-a');
    await queue.timers.list('dist-timer');
  }, 60_000);

  afterAll(async () => {
    pg.Client.prototype.query = query;
    await queue?.close();
    await fleet?.close();
  });

  it('every scan of a session table goes through its session id, but the listed cross-session statements', async () => {
    // Restored first: the explainer's own statements are not captured.
    pg.Client.prototype.query = query;
    const explainer = new pg.Client({ connectionString: fleet.config.databaseUrl });
    await explainer.connect();
    const offKey: string[] = [];
    const crossSession = new Set<string>();
    let explained = 0;
    try {
      // The planner's cheapest plan for a tiny table scans it whole; with sequential scans, hash and
      // merge joins and hashed subplans off, it reaches rows by key wherever the statement gives it
      // one, so a plan that still scans a session table without its id cannot reach the rows by key.
      for (const setting of ['enable_seqscan', 'enable_hashjoin', 'enable_mergejoin', 'enable_hashagg', 'enable_material']) {
        await explainer.query(`SET ${setting} = off`);
      }
      for (const { text, values } of captured.values()) {
        if (!/\b(FROM|UPDATE|INTO|JOIN)\s+(public\.)?"?(sessions|session_inputs|messages|tool_calls|usage_rounds|compactions|timers|budget_reservations)\b/i.test(text)) continue;
        if (/^\s*(BEGIN|COMMIT|ROLLBACK|SET|SELECT pg_advisory)/i.test(text)) continue;
        // Batched reads are several statements in one text (values inlined, checked ids: no ';' inside).
        const parts = values === undefined || values.length === 0 ? text.split(/;\s*\n|;\s*$/).filter((part) => part.trim() !== '') : [text];
        for (const part of parts) {
          const result = await explainer.query<{ 'QUERY PLAN': [{ Plan: Record<string, unknown> }] }>({ text: `EXPLAIN (FORMAT JSON, VERBOSE) ${part}`, values: parts.length === 1 ? values : undefined });
          explained += 1;
          const plan = result.rows[0]!['QUERY PLAN'][0].Plan;
          const scans = offKeyScans(plan, JSON.stringify(plan));
          if (scans.length === 0) continue;
          const known = Object.keys(CROSS_SESSION_STATEMENTS).find((fragment) => part.includes(fragment));
          if (known !== undefined) crossSession.add(known);
          if (known === undefined) offKey.push(`${scans.join('; ')}\n  in: ${part.replace(/\s+/g, ' ').slice(0, 300)}`);
        }
      }
    } finally {
      await explainer.end();
    }
    expect(explained).toBeGreaterThan(20);
    expect(offKey).toEqual([]);
    // The listed ones were seen (else the list is stale).
    expect([...crossSession].sort()).toEqual(Object.keys(CROSS_SESSION_STATEMENTS).sort());
  });
});
