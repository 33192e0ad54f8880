import { describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/run-cli.js';

function capture(env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: { stdout: (text: string) => void out.push(text), stderr: (text: string) => void err.push(text), env },
    out: () => out.join(''),
    err: () => err.join(''),
  };
}

describe('loopfleet CLI', () => {
  it('prints help listing the commands that exist', async () => {
    const run = capture();
    expect(await runCli(['help'], run.io)).toBe(0);
    expect(run.out()).toContain('migrate');
    expect(await runCli([], capture().io)).toBe(0);
  });

  it('prints the package version', async () => {
    const run = capture();
    expect(await runCli(['--version'], run.io)).toBe(0);
    expect(run.out()).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it.each([['version', 'extra'], ['-v', '--nope']])('%s with an argument (%s) is a bad command line: exit 2', async (name, arg) => {
    const run = capture();
    expect(await runCli([name, arg], run.io)).toBe(2);
    expect(run.err()).toContain(`takes no arguments, got "${arg}"`);
    expect(run.out()).toBe('');
  });

  it.each([['help', '--bogus'], ['--help', 'x']])('%s of an unknown command (%s) is a bad command line: exit 2', async (name, arg) => {
    const run = capture();
    expect(await runCli([name, arg], run.io)).toBe(2);
    expect(run.err()).toContain(`unknown command "${arg}"`);
    expect(run.out()).toBe('');
  });

  it('rejects an unknown command with exit code 2', async () => {
    const run = capture();
    expect(await runCli(['frobnicate'], run.io)).toBe(2);
    expect(run.err()).toContain('unknown command "frobnicate"');
  });

  it('rejects an unknown flag with exit code 2', async () => {
    const run = capture();
    expect(await runCli(['migrate', '--nope'], run.io)).toBe(2);
    expect(run.err()).toContain('--nope');
  });

  it('fails with exit code 1 and names the variable when configuration is invalid, before connecting', async () => {
    // Nothing listens on port 1: if migrate tried to connect, the error would be ECONNREFUSED instead.
    const run = capture({ DATABASE_URL: 'postgres://x@127.0.0.1:1/db', DATABASE_POOL_SIZE: '-1' });
    expect(await runCli(['migrate'], run.io)).toBe(1);
    expect(run.err()).toContain('[config.invalid]');
    expect(run.err()).toContain('DATABASE_POOL_SIZE');
    expect(run.err()).not.toContain('ECONNREFUSED');
  });

  it("does not refuse a client command for a worker-only variable (the host application's own LOG_LEVEL)", async () => {
    // Nothing listens on port 1: getting as far as connecting shows the configuration was accepted.
    const run = capture({ DATABASE_URL: 'postgres://x@127.0.0.1:1/db', LOG_LEVEL: 'warning', LOG_FORMAT: 'text', METRICS_PORT: 'http' });
    expect(await runCli(['migrate'], run.io)).toBe(1);
    expect(run.err()).not.toContain('config.invalid');
    expect(run.err()).toContain('ECONNREFUSED');
  });

  it('refuses a stream id part above 2^64 - 1 as a bad command line, before connecting', async () => {
    // Nothing listens on port 1: a Redis or Postgres error would show the id got that far.
    const run = capture({ DATABASE_URL: 'postgres://x@127.0.0.1:1/db', REDIS_URL: 'redis://127.0.0.1:1' });
    expect(await runCli(['tail', 's1', '--after', '1-18446744073709551616', '--limit', '1'], run.io)).toBe(2);
    expect(run.err()).toContain('--after must be a stream id');
    expect(run.out()).toBe('');
  });

  it('does not echo a database password in configuration errors', async () => {
    const run = capture({ DATABASE_URL: 'mysql://user:hunter2@host/db' });
    expect(await runCli(['migrate'], run.io)).toBe(1);
    expect(run.err()).toContain('DATABASE_URL');
    expect(run.err()).not.toContain('hunter2');
    const query = capture({ DATABASE_URL: 'mysql://host/db?sslmode=require&password=hunter2', REDIS_URL: 'http://cache?sslpassword=hunter3' });
    expect(await runCli(['migrate'], query.io)).toBe(1);
    expect(query.err()).toContain('DATABASE_URL: must be a postgres:// or postgresql:// URL: its scheme is not one of these (the value is not shown: it may contain a password)');
    expect(query.err()).not.toMatch(/hunter[23]|mysql:|http:/);
  });
});
