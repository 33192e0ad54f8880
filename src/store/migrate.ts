import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { migrationsFolder } from './package-paths.js';

/**
 * Session-level advisory lock key shared by every `loopfleet migrate`, so concurrent runs (three
 * containers starting at once) apply migrations one after another instead of racing on DDL.
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

/** Applies the committed migrations. Idempotent, and safe to run from several processes at once. */
export async function runMigrations(options: MigrateOptions): Promise<MigrationReport> {
  if (options.createDatabase === true) await ensureDatabase(options.databaseUrl);
  const client = new pg.Client({ connectionString: options.databaseUrl, application_name: 'loopfleet-migrate' });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
    try {
      const before = await appliedCount(client);
      const folder = migrationsFolder();
      await migrate(drizzle(client), { migrationsFolder: folder });
      const after = await appliedCount(client);
      const tags = readJournal(folder).entries.map((entry) => entry.tag);
      return { applied: tags.slice(before, after), total: after };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY.toString()]);
    }
  } finally {
    await client.end();
  }
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
  const target = new URL(databaseUrl);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (name === '') throw new Error('DATABASE_URL names no database');
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString(), application_name: 'loopfleet-migrate' });
  await client.connect();
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
    await client.end();
  }
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
