import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { FleetFixture } from '../../support/fleet-fixture.js';

const CLI_ENTRY = fileURLToPath(new URL('../../../src/cli/main.ts', import.meta.url));

/**
 * `loopfleet tail … | head -1`: the reader closes the pipe after its first line. The next event the
 * CLI prints fails with EPIPE, and the process must end quietly, not crash with an unhandled error.
 */
describe('loopfleet output into a pipe its reader closed', () => {
  let fleet: FleetFixture;

  beforeAll(async () => {
    fleet = await FleetFixture.create('cli_pipe');
    await fleet.startWorker();
  });

  afterAll(async () => {
    await fleet?.close();
  });

  it('tail exits 0, without a stack trace, once its output has no reader', async () => {
    const send = (input: string) => acceptAndKick(fleet.acceptDeps, { sessionId: 'piped', kind: 'send', payload: { input } });
    await send('first');
    await fleet.waitForSessionFinished('piped', 1);
    const child = spawn(process.execPath, ['--import', 'tsx', CLI_ENTRY, 'tail', 'piped', '--after', '0'], {
      env: { PATH: process.env.PATH, DATABASE_URL: fleet.config.databaseUrl, REDIS_URL: fleet.config.redisUrl, LOOPFLEET_QUEUE: fleet.config.queueName },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    // Like `head -1`: read the first chunk, then close the pipe.
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    child.stdout.destroy();
    // More events to print, into the closed pipe.
    await send('second');
    await fleet.waitForSessionFinished('piped', 2);
    const code = await Promise.race([exited, fleet.waitFor('the CLI to exit', async () => undefined, 30_000).catch(() => 'still running' as const)]);
    if (code === 'still running') child.kill('SIGKILL');
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  }, 60_000);
});
