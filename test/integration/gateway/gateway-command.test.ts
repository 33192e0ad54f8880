import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runCliProcess } from '../../support/run-cli-process.js';
import { createTestDatabase, uniqueName, type TestDatabase } from '../../support/test-database.js';

const CLI_ENTRY = fileURLToPath(new URL('../../../src/cli/main.ts', import.meta.url));

/** `loopfleet gateway` as a process: it starts, answers, stops on SIGTERM; a refused configuration exits 1. */
describe('loopfleet gateway', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('gateway_cmd');
  });

  afterAll(async () => {
    await db?.drop();
  });

  const env = (extra: Record<string, string> = {}): Record<string, string> =>
    Object.assign({ DATABASE_URL: db.url, REDIS_URL: inject('redisUrl'), LOOPFLEET_QUEUE: uniqueName('gwcmd'), LOG_LEVEL: 'silent' }, extra);

  it('refuses GATEWAY_AUTH=none on a non-loopback host (exit 1, config.invalid)', async () => {
    const result = await runCliProcess(['gateway', '--host', '0.0.0.0', '--port', '0'], env());
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('[config.invalid]');
    expect(result.stderr).toContain('GATEWAY_AUTH');
  });

  it('serves /healthz and /readyz on --port, and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI_ENTRY, 'gateway', '--port', '0'], {
      env: Object.assign({ PATH: process.env.PATH }, env()),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      let stdout = '';
      const timer = setTimeout(() => reject(new Error(`no listening line within 30 s\n${stderr}`)), 30_000);
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const match = /gateway listening on (\S+)/.exec(stdout);
        if (match !== null) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
      child.on('close', () => reject(new Error(`exited before listening\n${stderr}`)));
    });
    expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: 'ok' });
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    expect((await fetch(`${url}/v1/me`)).status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 60_000);
});
