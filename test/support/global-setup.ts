import type { TestProject } from 'vitest/node';
import { resolveServices, type ResolvedServices } from './resolve-services.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A Postgres URL whose user may CREATE DATABASE; each test file makes its own database. */
    postgresAdminUrl: string;
    /** A Redis URL; each test file uses its own queue names and key prefixes. */
    redisUrl: string;
  }
}

let services: ResolvedServices | undefined;

/** Finds Postgres and Redis once per run (env, then local defaults, then testcontainers). */
export async function setup(project: TestProject): Promise<void> {
  services = await resolveServices();
  project.provide('postgresAdminUrl', services.postgresAdminUrl);
  project.provide('redisUrl', services.redisUrl);
}

export async function teardown(): Promise<void> {
  await services?.stop();
}
