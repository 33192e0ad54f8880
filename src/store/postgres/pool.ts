import pg from 'pg';
import { ConfigInvalidError } from '../../core/errors/index.js';
import { MAX_TIMER_MS } from '../../core/ports/clock.js';

/** Options of {@link createPgPool}. */
export interface PgPoolOptions {
  /** Shown in `pg_stat_activity.application_name`. Default `loopfleet`. */
  applicationName?: string;
  /** Most connections the pool opens at once. Default 10. */
  maxConnections?: number;
  /** How long to wait for a free connection before failing, in milliseconds. Default 10000. */
  connectionTimeoutMs?: number;
  /** How long an unused connection stays open, in milliseconds. Default 10000. */
  idleTimeoutMs?: number;
  /**
   * Longest a statement may run, in milliseconds (`DATABASE_STATEMENT_TIMEOUT_MS`). The server
   * cancels it past this (`statement_timeout`: an error response, so it wrote nothing), and the
   * client gives up {@link QUERY_TIMEOUT_SLACK_MS} later on a statement the server never answered
   * (`query_timeout`: a partition, a frozen host) and discards its connection; whether that
   * statement committed is then unknown, as after a lost connection. Without these, a connection
   * gone silent holds its statement, and every write queued behind it, until the process restarts.
   * 0 sets neither (the server's own `statement_timeout` applies). Default 30000.
   */
  statementTimeoutMs?: number;
  /**
   * What stands between the pool and Postgres (`DATABASE_POOLER`, docs/postgres-pooling.md):
   * `none` (the server itself), `session` (a pooler in session mode: PgBouncer refuses the
   * `statement_timeout` startup parameter, so none is sent) or `transaction` (a pooler in
   * transaction mode, such as PgBouncer below 1.21: each transaction may run on another server
   * connection, so statements are also sent unnamed — planned per execution — instead of as the named
   * prepared statements a connection keeps). Default `none`.
   */
  pooler?: DatabasePooler;
  /**
   * Called when an idle connection fails (server restart, network cut). The pool has already dropped
   * that connection, and the next query opens a new one, so this is informational. Default: ignore.
   */
  onIdleClientError?: (error: Error) => void;
}

/** The poolers {@link PgPoolOptions.pooler} knows. */
export const DATABASE_POOLERS = ['none', 'session', 'transaction'] as const;
export type DatabasePooler = (typeof DATABASE_POOLERS)[number];

/**
 * How much longer than the statement timeout the client waits for an answer before it gives up on
 * the connection, in milliseconds: room for the server's own cancel to arrive first, which leaves
 * the connection usable and says the statement wrote nothing.
 */
export const QUERY_TIMEOUT_SLACK_MS = 1_000;

/** Time without traffic before the first TCP keepalive probe, in milliseconds. */
const KEEPALIVE_DELAY_MS = 10_000;

const INT8_OID = 20;
const TIMESTAMPTZ_OID = 1184;

/**
 * `bigint` columns (seqs, tokens, counters) come back as numbers. A value beyond 2^53 stays a string
 * rather than being silently rounded, so row validation rejects it as corrupt.
 */
function parseInt8(value: string): number | string {
  const parsed = Number(value);
  return Number.isSafeInteger(parsed) ? parsed : value;
}

const parseTimestamptzSlowly = pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text') as (value: string) => unknown;

/**
 * `timestamptz` columns as pg's own parser reads them (the same `Date`, by construction: the same
 * `Date.UTC` call and fraction arithmetic), without its regular expressions for the shape Postgres
 * writes with its default `DateStyle` — `YYYY-MM-DD HH:MM:SS[.ffffff]±HH` — which every run start and
 * claim reads a dozen of. Anything else (a zone offset with minutes, a year before 1000 or after 9999,
 * BC, infinity) goes to pg's parser.
 */
export function parseTimestamptz(value: string): unknown {
  const n = value.length;
  const sign = value.charCodeAt(n - 3);
  if (n < 22 || value.charCodeAt(4) !== 45 || value.charCodeAt(7) !== 45 || value.charCodeAt(10) !== 32 || value.charCodeAt(13) !== 58 || value.charCodeAt(16) !== 58 || (sign !== 43 && sign !== 45)) {
    return parseTimestamptzSlowly(value);
  }
  const year = digits(value, 0, 4);
  const month = digits(value, 5, 7);
  const day = digits(value, 8, 10);
  const hour = digits(value, 11, 13);
  const minute = digits(value, 14, 16);
  const second = digits(value, 17, 19);
  const zone = digits(value, n - 2, n);
  // Between the seconds and the zone: nothing, or a dot and 1–6 digits.
  const fraction = n - 3 > 19 ? value.slice(19, n - 3) : '';
  if (year < 1000 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0 || zone < 0 || (fraction !== '' && (fraction.charCodeAt(0) !== 46 || fraction.length > 7 || digits(fraction, 1, fraction.length) < 0))) {
    return parseTimestamptzSlowly(value);
  }
  const ms = fraction === '' ? 0 : 1000 * parseFloat(fraction);
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms) - (sign === 45 ? -1 : 1) * zone * 3_600_000);
}

/** The decimal number in `text[from, to)`, or -1 unless it is all ASCII digits (and not empty). */
function digits(text: string, from: number, to: number): number {
  if (to <= from) return -1;
  let value = 0;
  for (let i = from; i < to; i += 1) {
    const code = text.charCodeAt(i) - 48;
    if (code < 0 || code > 9) return -1;
    value = value * 10 + code;
  }
  return value;
}

/**
 * Whether `pool` reads values as the store needs them: made by {@link createPgPool}, whose parsers turn
 * `bigint` columns into numbers (a plain `pg.Pool` returns them as strings, which every row check
 * refuses as `state.corrupt`).
 */
export function hasStoreTypes(pool: pg.Pool): boolean {
  const types = (pool as { options?: { types?: { getTypeParser?: (oid: number, format?: string) => unknown } } }).options?.types;
  return typeof types?.getTypeParser === 'function' && types.getTypeParser(INT8_OID, 'text') === parseInt8;
}

/**
 * Creates the pool the store runs on. The int8 and timestamptz parsers are set on this pool only
 * (through the `types` option), never on the process-wide `pg.types`, so other pg users in the
 * process are unaffected.
 */
export function createPgPool(url: string, options: PgPoolOptions = {}): pg.Pool {
  const statementTimeoutMs = statementTimeout(options.statementTimeoutMs ?? 30_000);
  const pooler = databasePooler(options.pooler ?? 'none');
  const pool = new pg.Pool({
    // Behind a transaction-mode pooler every statement goes unnamed (one place, not every query).
    Client: pooler === 'transaction' ? UnnamedStatementClient : pg.Client,
    connectionString: url,
    application_name: options.applicationName ?? 'loopfleet',
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 10_000,
    idleTimeoutMillis: options.idleTimeoutMs ?? 10_000,
    // A dead peer (a crashed host, a dropped route) is found by probes within minutes, rather than
    // only after the OS default of 2 hours without traffic.
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
    // A startup parameter, so it costs no round trip per statement (0 sends none: the server's own).
    // A pooler refuses it (PgBouncer: "unsupported startup parameter"): set it on the server's role
    // or database there; the client's timer below still bounds a statement never answered.
    statement_timeout: pooler === 'none' ? statementTimeoutMs : undefined,
    // The client's own timer, for a connection that answers nothing at all.
    query_timeout: statementTimeoutMs === 0 ? 0 : statementTimeoutMs + QUERY_TIMEOUT_SLACK_MS,
    types: {
      getTypeParser: (oid: number, format?: string) =>
        format === 'binary'
          ? pg.types.getTypeParser(oid, 'binary')
          : oid === INT8_OID
            ? parseInt8
            : oid === TIMESTAMPTZ_OID
              ? parseTimestamptz
              : pg.types.getTypeParser(oid, format as 'text'),
    },
  });
  // Without a listener an idle-connection error would crash the process.
  const onError = options.onIdleClientError ?? (() => {});
  pool.on('error', onError);
  return pool;
}

/**
 * A `pg.Client` that sends every statement unnamed: a config object's `name` is dropped, so pg
 * neither parses it into a named prepared statement on the connection nor expects one there later
 * (behind a transaction-mode pooler the next use may reach another server connection, which never
 * saw it: `prepared statement "loopfleet_…" does not exist`). A statement with values still goes
 * through the extended protocol (Parse, Bind, Execute, Sync in one message), as one transaction;
 * one without values as a simple query. Everything else of the config is passed on as it is.
 */
class UnnamedStatementClient extends pg.Client {}
const sendQuery = pg.Client.prototype.query;
UnnamedStatementClient.prototype.query = function query(this: pg.Client, ...args: unknown[]): unknown {
  const config = args[0];
  if (typeof config === 'object' && config !== null && (config as { name?: unknown }).name !== undefined && typeof (config as { submit?: unknown }).submit !== 'function') {
    args[0] = Object.assign({}, config, { name: undefined });
  }
  return (sendQuery as (...all: unknown[]) => unknown).apply(this, args);
} as typeof sendQuery;

function databasePooler(value: unknown): DatabasePooler {
  if (typeof value === 'string' && (DATABASE_POOLERS as readonly string[]).includes(value)) return value as DatabasePooler;
  throw new ConfigInvalidError(`createPgPool: pooler must be one of ${DATABASE_POOLERS.join(', ')}`, { details: { received: String(value) } });
}

function statementTimeout(value: number): number {
  if (Number.isSafeInteger(value) && value >= 0 && value + QUERY_TIMEOUT_SLACK_MS <= MAX_TIMER_MS) return value;
  throw new ConfigInvalidError(`createPgPool: statementTimeoutMs must be an integer from 0 to ${MAX_TIMER_MS - QUERY_TIMEOUT_SLACK_MS} (milliseconds)`, {
    details: { received: String(value) },
  });
}
