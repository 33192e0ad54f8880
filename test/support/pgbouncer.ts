import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { parse as parseConnectionString } from 'pg-connection-string';

/**
 * A real PgBouncer for the tests (docs/postgres-pooling.md): Debian's `pgbouncer` (1.18, which keeps
 * no prepared statements across transactions), started on a free loopback port in transaction
 * mode, in front of the test Postgres. One wildcard database entry forwards every database name to
 * that server, so a test file's private database is reached through it under its own name.
 */

/** Where the binary is looked for: `PGBOUNCER_BIN`, then Debian's path. */
export const PGBOUNCER_PATH = process.env.PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer';

/** Whether the suites through PgBouncer run: yes when it is installed; under CI=true always, so a missing one fails (.ci/run installs it). */
export function pgbouncerAvailable(): boolean {
  return existsSync(PGBOUNCER_PATH) || process.env.CI === 'true';
}

/** Logged by a suite that skips. */
export const PGBOUNCER_MISSING = `no pgbouncer at ${PGBOUNCER_PATH} (apt-get install pgbouncer, or set PGBOUNCER_BIN); the PgBouncer suites are skipped (under CI=true they fail instead)`;

export interface PgBouncerOptions {
  /** `pool_mode`. Default `transaction`. */
  poolMode?: 'transaction' | 'session';
  /** `default_pool_size`: server connections per database and user. Default 4, far fewer than the clients, so they must share. */
  poolSize?: number;
  /** `max_client_conn`. Default 400. */
  maxClientConn?: number;
}

export interface RunningPgBouncer {
  port: number;
  /** The pgbouncer process (for CPU readings). */
  pid: number;
  /** `url` (a database of the server behind it) as reached through this PgBouncer. */
  via(url: string): string;
  /** What the process wrote (its log), for failure messages. */
  log(): string;
  /** Stops it (SIGTERM, then SIGKILL) and removes its files. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts PgBouncer in front of the server `serverUrl` names (its host, port, user and password; the
 * database in it is ignored). Resolves once a `SELECT 1` passes through it.
 */
export async function startPgBouncer(serverUrl: string, options: PgBouncerOptions = {}): Promise<RunningPgBouncer> {
  if (!existsSync(PGBOUNCER_PATH)) throw new Error(PGBOUNCER_MISSING);
  const server = parseConnectionString(serverUrl);
  const user = server.user ?? 'postgres';
  const dir = mkdtempSync(join(tmpdir(), 'loopfleet-pgbouncer-'));
  // Run as root, pgbouncer switches to another user (`-u`), who must read these files.
  chmodSync(dir, 0o755);
  const port = await freePort();
  const target = [`host=${server.host ?? '127.0.0.1'}`, `port=${server.port ?? '5432'}`, `user=${user}`, server.password ? `password=${server.password}` : ''].filter((part) => part !== '').join(' ');
  const ini = [
    '[databases]',
    `* = ${target}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    // The client side trusts loopback; the user must still be listed.
    'auth_type = trust',
    `auth_file = ${join(dir, 'userlist.txt')}`,
    `pool_mode = ${options.poolMode ?? 'transaction'}`,
    `default_pool_size = ${options.poolSize ?? 4}`,
    `max_client_conn = ${options.maxClientConn ?? 400}`,
    // No ignore_startup_parameters: a pool that sent statement_timeout would be refused, as in production.
    // Idle server connections go soon: a test database is dropped, and others wait for the server's slots.
    'server_idle_timeout = 10',
    'log_connections = 0',
    'log_disconnections = 0',
  ].join('\n');
  writeFileSync(join(dir, 'pgbouncer.ini'), `${ini}\n`, { mode: 0o644 });
  writeFileSync(join(dir, 'userlist.txt'), `"${user}" ""\n`, { mode: 0o644 });
  const args = process.getuid?.() === 0 ? ['-u', runAsUser(), join(dir, 'pgbouncer.ini')] : [join(dir, 'pgbouncer.ini')];
  const child = spawn(PGBOUNCER_PATH, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = onceOnly(async () => {
    await stopProcess(child, exited);
    rmSync(dir, { recursive: true, force: true });
  });
  const via = (url: string): string => {
    const through = new URL(url);
    through.hostname = '127.0.0.1';
    through.port = String(port);
    return through.toString();
  };
  try {
    await untilAnswering(via(serverUrl), child, () => output);
  } catch (error) {
    await stop();
    throw error;
  }
  return { port, pid: child.pid ?? 0, via, log: () => output, stop };
}

/** The unprivileged user a root-started pgbouncer runs as: `postgres` where the server is installed, else `nobody`. */
function runAsUser(): string {
  return existsSync('/var/lib/postgresql') ? 'postgres' : 'nobody';
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** Polls a `SELECT 1` through the pooler until it answers, the process exits, or 15 s pass. */
async function untilAnswering(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`pgbouncer exited at start (${child.exitCode ?? child.signalCode}):\n${output()}`);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`pgbouncer did not answer within 15 s (${String(error)}):\n${output()}`);
    } finally {
      await client.end().catch(() => {});
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function stopProcess(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

function onceOnly(work: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => (running ??= work());
}
