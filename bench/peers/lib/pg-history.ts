/**
 * A durable history table for the Postgres-queue peers (graphile-worker, pg-boss, DBOS): one row per
 * message, appended per input in one transaction, loaded per session in order. `synchronous_commit`
 * stays the server's (on). And the checks every system's `verify` shares.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import type { ChatMessage } from './standard.js';
import { streamKey } from './standard.js';
import type { VerifyResult } from './system.js';

export const HISTORY_DDL = `CREATE TABLE IF NOT EXISTS peer_history (
  session_id text NOT NULL,
  seq bigint NOT NULL,
  input_id text NOT NULL,
  message jsonb NOT NULL,
  PRIMARY KEY (session_id, seq)
)`;

export async function createHistoryTable(pgUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  try {
    await client.query(HISTORY_DDL);
  } finally {
    await client.end();
  }
}

export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
}

export async function loadHistory(db: Queryable, sessionId: string): Promise<ChatMessage[]> {
  const result = await db.query('SELECT message FROM peer_history WHERE session_id = $1 ORDER BY seq', [sessionId]);
  return result.rows.map((row) => row['message'] as ChatMessage);
}

/** One statement (so one transaction in autocommit): the input's messages after the session's last. */
export async function appendHistory(db: Queryable, sessionId: string, inputId: string, messages: ChatMessage[]): Promise<void> {
  await db.query(
    `INSERT INTO peer_history (session_id, seq, input_id, message)
     SELECT $1, COALESCE((SELECT max(seq) FROM peer_history WHERE session_id = $1), 0) + m.ord, $2, m.message
       FROM unnest($3::jsonb[]) WITH ORDINALITY AS m(message, ord)`,
    [sessionId, inputId, messages.map((message) => JSON.stringify(message))],
  );
}

/** Every input's 4 messages stored, inputs in add order per session. */
export async function verifyHistory(pgUrl: string, expected: ReadonlyMap<string, readonly string[]>): Promise<VerifyResult> {
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  const problems: string[] = [];
  let historyInputs = 0;
  try {
    const result = await client.query<{ session_id: string; input_id: string; n: number }>(
      `SELECT session_id, input_id, count(*)::int AS n FROM peer_history GROUP BY session_id, input_id ORDER BY session_id, min(seq)`,
    );
    const stored = new Map<string, string[]>();
    for (const row of result.rows) {
      if (row.n !== 4) problems.push(`${row.session_id}/${row.input_id}: ${row.n} messages, expected 4`);
      else historyInputs += 1;
      const list = stored.get(row.session_id) ?? [];
      list.push(row.input_id);
      stored.set(row.session_id, list);
    }
    problems.push(...compareOrder(expected, stored));
  } finally {
    await client.end();
  }
  return { ok: problems.length === 0, historyInputs, problems: problems.slice(0, 20) };
}

/** Input ids per session, stored against expected (add order). */
export function compareOrder(expected: ReadonlyMap<string, readonly string[]>, stored: ReadonlyMap<string, readonly string[]>): string[] {
  const problems: string[] = [];
  for (const [sessionId, inputs] of expected) {
    const got = stored.get(sessionId) ?? [];
    if (got.join(',') !== inputs.join(',')) problems.push(`${sessionId}: stored ${got.length} inputs [${got.slice(0, 5).join(',')}…], expected ${inputs.length} in add order`);
  }
  return problems;
}

/** 28 stream entries per input on each session's stream. */
export async function verifyStreams(redisUrl: string, runId: string, expected: ReadonlyMap<string, readonly string[]>, perInput = 28): Promise<string[]> {
  const redis = new Redis(redisUrl);
  const problems: string[] = [];
  try {
    for (const [sessionId, inputs] of expected) {
      const length = await redis.xlen(streamKey(runId, sessionId));
      if (length !== inputs.length * perInput) problems.push(`${sessionId}: ${length} stream entries, expected ${inputs.length * perInput}`);
    }
  } finally {
    redis.disconnect();
  }
  return problems.slice(0, 20);
}

/** The whole check of a peer that keeps its history in `peer_history`: the rows, then the streams. */
export async function verifyPgPeer(ctx: { pgUrl: string; redisUrl: string; runId: string }, expected: ReadonlyMap<string, readonly string[]>): Promise<VerifyResult> {
  const result = await verifyHistory(ctx.pgUrl, expected);
  const streams = await verifyStreams(ctx.redisUrl, ctx.runId, expected);
  return { ok: result.ok && streams.length === 0, historyInputs: result.historyInputs, problems: [...result.problems, ...streams] };
}
