import type { TestProject } from 'vitest/node';
import { startPgBouncer, type RunningPgBouncer } from './pgbouncer.js';
import { resolveServices, type ResolvedServices } from './resolve-services.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A Postgres URL whose user may CREATE DATABASE; each test file makes its own database. */
    postgresAdminUrl: string;
    /** A Redis URL; each test file uses its own queue names and key prefixes. */
    redisUrl: string;
    /**
     * With `LOOPFLEET_TEST_PGBOUNCER=1`: the port of a PgBouncer (transaction mode) in front of
     * `postgresAdminUrl`, through which every `FleetFixture` runs (docs/postgres-pooling.md); else 0.
     */
    pgbouncerPort: number;
  }
}

let services: ResolvedServices | undefined;
let bouncer: RunningPgBouncer | undefined;

/** Finds Postgres and Redis once per run (env, then local defaults, then testcontainers). */
export async function setup(project: TestProject): Promise<void> {
  services = await resolveServices();
  project.provide('postgresAdminUrl', services.postgresAdminUrl);
  project.provide('redisUrl', services.redisUrl);
  // 5 server connections per test database (default_pool_size is per database), far fewer than a fleet's clients.
  if (process.env.LOOPFLEET_TEST_PGBOUNCER === '1') bouncer = await startPgBouncer(services.postgresAdminUrl, { poolSize: 5, maxClientConn: 2000 });
  project.provide('pgbouncerPort', bouncer?.port ?? 0);
}

export async function teardown(): Promise<void> {
  await bouncer?.stop();
  await services?.stop();
}
