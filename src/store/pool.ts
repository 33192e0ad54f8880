import pg from 'pg';

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
   * Called when an idle connection fails (server restart, network cut). The pool has already dropped
   * that connection, and the next query opens a new one, so this is informational. Default: ignore.
   */
  onIdleClientError?: (error: Error) => void;
}

const INT8_OID = 20;

/**
 * `bigint` columns (seqs, tokens, counters) come back as numbers. A value beyond 2^53 stays a string
 * rather than being silently rounded, so row validation rejects it as corrupt.
 */
function parseInt8(value: string): number | string {
  const parsed = Number(value);
  return Number.isSafeInteger(parsed) ? parsed : value;
}

/**
 * Creates the pool the store runs on. The int8 parser is set on this pool only (through the `types`
 * option), never on the process-wide `pg.types`, so other pg users in the process are unaffected.
 */
export function createPgPool(url: string, options: PgPoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    application_name: options.applicationName ?? 'loopfleet',
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 10_000,
    idleTimeoutMillis: options.idleTimeoutMs ?? 10_000,
    types: {
      getTypeParser: (oid: number, format?: string) =>
        oid === INT8_OID && format !== 'binary' ? parseInt8 : pg.types.getTypeParser(oid, format as 'text'),
    },
  });
  // Without a listener an idle-connection error would crash the process.
  const onError = options.onIdleClientError ?? (() => {});
  pool.on('error', onError);
  return pool;
}
