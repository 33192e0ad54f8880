import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { parse as parseConnectionString } from 'pg-connection-string';
import pg from 'pg';
import { migrationsFolder } from './package-paths.js';

/**
 * Advisory lock key shared by every `loopfleet migrate`, so concurrent runs (three containers
 * starting at once) apply migrations one after another instead of racing on DDL. Taken for the run's
 * one transaction (`pg_advisory_xact_lock`), not for its session: behind a pooler in transaction mode
 * (PgBouncer) a session-level lock would stay on whichever server connection took it, and the run's
 * next statements could go to another.
 */
const MIGRATION_LOCK_KEY = 7_210_443_551_002_001n;

export interface MigrateOptions {
  /** The database to migrate. */
  databaseUrl: string;
  /** Create the database first if it does not exist (needs CREATEDB). Default false. */
  createDatabase?: boolean;
}

export interface MigrationReport {
  /** Tags of the migrations this run applied, in order (empty when already up to date). */
  applied: string[];
  /** Number of migrations the database has after the run. */
  total: number;
}

interface Journal {
  entries: { idx: number; tag: string }[];
}

/**
 * Applies the committed migrations. Idempotent, and safe to run from several processes at once. The
 * whole run is one transaction on one connection — the lock, drizzle's bookkeeping table, every
 * pending migration and its row in that table — so it works the same straight to Postgres and
 * through a pooler in transaction mode, and a run that fails applies nothing.
 */
export async function runMigrations(options: MigrateOptions): Promise<MigrationReport> {
  if (options.createDatabase === true) await ensureDatabase(options.databaseUrl);
  const client = await connect(options.databaseUrl);
  try {
    await client.query('BEGIN');
    try {
      const report = await applyPending(client, migrationsFolder());
      await client.query('COMMIT');
      return report;
    } catch (error) {
      // Nothing of the run stays; on a connection that broke there is nothing to roll back, and the
      // error to report is the one that ended the run.
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  } finally {
    await disconnect(client);
  }
}

/**
 * What drizzle's migrator does (`drizzle-orm/pg-core/dialect.js`, same table, hashes and rule: a
 * migration is pending when its journal time is after the last recorded one), inside the caller's
 * transaction and under the lock, so the table agrees with `drizzle-kit`'s.
 */
async function applyPending(client: pg.Client, folder: string): Promise<MigrationReport> {
  await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
  const before = await appliedCount(client);
  await client.query('CREATE SCHEMA IF NOT EXISTS drizzle');
  await client.query('CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)');
  const last = await client.query<{ created_at: string | null }>('SELECT created_at::text AS created_at FROM drizzle.__drizzle_migrations ORDER BY created_at DESC LIMIT 1');
  const lastMillis = last.rows[0] === undefined ? null : Number(last.rows[0].created_at);
  for (const migration of readMigrationFiles({ migrationsFolder: folder })) {
    if (lastMillis !== null && lastMillis >= migration.folderMillis) continue;
    for (const statement of migration.sql) await client.query(statement);
    await client.query('INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ($1, $2)', [migration.hash, migration.folderMillis]);
  }
  const after = await appliedCount(client);
  const tags = readJournal(folder).entries.map((entry) => entry.tag);
  return { applied: tags.slice(before, after), total: after };
}

/**
 * A connection of its own (no pool: the run's transaction holds it throughout). Its `'error'` listener
 * keeps a connection dropped between statements (a restart, `pg_terminate_backend`) from crashing the
 * process: the statement that was running, or the next one, fails instead.
 */
async function connect(connectionString: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString, application_name: 'loopfleet-migrate', keepAlive: true });
  client.on('error', () => {});
  await client.connect();
  return client;
}

/** Ends the connection; on one already broken there is nothing to end, and nothing to report. */
async function disconnect(client: pg.Client): Promise<void> {
  await client.end().catch(() => {});
}

async function appliedCount(client: pg.Client): Promise<number> {
  const exists = await client.query<{ present: boolean }>(
    "SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS present",
  );
  if (exists.rows[0]?.present !== true) return 0;
  const result = await client.query<{ n: string }>('SELECT count(*)::text AS n FROM drizzle.__drizzle_migrations');
  return Number(result.rows[0]?.n ?? 0);
}

function readJournal(folder: string): Journal {
  return JSON.parse(readFileSync(join(folder, 'meta', '_journal.json'), 'utf8')) as Journal;
}

/** Creates the target database when missing, connecting to the server's `postgres` database. */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  // The name as pg itself reads it from the URL (`decodeURI`), so the database created is the one
  // connected to next; `decodeURIComponent` decoded `%2F` that pg leaves as it is.
  const name = parseConnectionString(databaseUrl).database ?? '';
  if (name === '') throw new Error('DATABASE_URL names no database');
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = await connect(admin.toString());
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount !== 0) return false;
    try {
      await client.query(`CREATE DATABASE ${quoteIdent(name)}`);
      return true;
    } catch (error) {
      // Another process created it between our check and our CREATE: that is the outcome we wanted.
      if ((error as { code?: string }).code === '42P04' || (error as { code?: string }).code === '23505') return false;
      throw error;
    }
  } finally {
    await disconnect(client);
  }
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
