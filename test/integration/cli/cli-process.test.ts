import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FleetFixture } from '../../support/fleet-fixture.js';

const CLI_ENTRY = fileURLToPath(new URL('../../../src/cli/main.ts', import.meta.url));

/** Runs the CLI from source in a child process, writing `stdin` (if given) to its standard input. */
function runWithStdin(args: string[], env: NodeJS.ProcessEnv, stdin?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI_ENTRY, ...args], { env: Object.assign({ PATH: process.env.PATH }, env), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}

/** A loopback port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('loopfleet as a process', () => {
  let fleet: FleetFixture;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    fleet = await FleetFixture.create('cli_process');
    env = { DATABASE_URL: fleet.config.databaseUrl, REDIS_URL: fleet.config.redisUrl, LOOPFLEET_QUEUE: fleet.config.queueName };
  });

  afterAll(async () => {
    await fleet?.close();
  });

  it('send - sends what stdin holds, not a dash', async () => {
    const run = await runWithStdin(['send', 'proc-stdin', '-'], env, 'line one\nline two\n');
    expect(run).toMatchObject({ code: 0, stdout: 'accepted proc-stdin seq 1\n' });
    const input = await fleet.store.getInput('proc-stdin', 1);
    expect(input?.payload).toMatchObject({ input: 'line one\nline two' });
  });

  it('Redis unreachable: one line naming host and port, exit 1', async () => {
    const port = await closedPort();
    const run = await runWithStdin(['send', 'proc-down', 'hi'], Object.assign({}, env, { REDIS_URL: `redis://:hunter2@127.0.0.1:${port}` }));
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`cannot reach Redis at 127.0.0.1:${port}`);
    expect(run.stderr).not.toContain('hunter2');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('Postgres unreachable: one line naming host and port, exit 1', async () => {
    const port = await closedPort();
    const run = await runWithStdin(['history', 'proc-down'], Object.assign({}, env, { DATABASE_URL: `postgres://postgres:hunter2@127.0.0.1:${port}/x` }));
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`cannot reach Postgres at 127.0.0.1:${port}`);
    expect(run.stderr).not.toContain('hunter2');
  });

  it('a Postgres-only command runs with Redis unreachable: it never opens Redis', async () => {
    const port = await closedPort();
    const run = await runWithStdin(['sessions', '--json'], Object.assign({}, env, { REDIS_URL: `redis://127.0.0.1:${port}` }));
    expect(run).toMatchObject({ code: 0 });
    expect(JSON.parse(run.stdout)).toHaveProperty('sessions');
  });

  it('<command> --help and help <command> print the same help, exit 0', async () => {
    const flag = await runWithStdin(['send', '--help'], {});
    const word = await runWithStdin(['help', 'send'], {});
    expect(flag).toMatchObject({ code: 0, stderr: '' });
    expect(flag.stdout).toContain('Usage: loopfleet send [options] <session> <text>');
    expect(word.stdout).toBe(flag.stdout);
  });
});
