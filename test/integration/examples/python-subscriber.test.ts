/**
 * examples/python-subscriber/subscribe.py follows a session's Redis stream with redis-py while a
 * worker runs an input, and stops at its `input_finished`. It needs a Python 3 with redis-py (Debian:
 * `python3-redis`, which .ci/run installs): under CI=true a missing one fails the test, elsewhere the
 * test is skipped with a message.
 */
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { FleetFixture } from '../../support/fleet-fixture.js';

const example = (path: string): string => fileURLToPath(new URL(`../../../examples/${path}`, import.meta.url));
const SCRIPT = example('python-subscriber/subscribe.py');

/** The first Python 3 that imports redis: $PYTHON, then `python3` on PATH, then Debian's own. */
function findPython(): string | null {
  const candidates = [process.env.PYTHON, 'python3', '/usr/bin/python3'].filter((path): path is string => path !== undefined && path !== '');
  return candidates.find((path) => spawnSync(path, ['-c', 'import redis'], { stdio: 'ignore' }).status === 0) ?? null;
}

const python = findPython();
const inCi = process.env.CI === 'true';
const MISSING = 'no python3 with redis-py (Debian: apt-get install python3-redis)';
if (python === null && !inCi) console.warn(`skipping the Python subscriber test: ${MISSING}`);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe.skipIf(python === null && !inCi)('examples/python-subscriber', () => {
  let fleet: FleetFixture;

  beforeAll(async () => {
    if (python === null) throw new Error(`CI=true: ${MISSING}`);
    fleet = await FleetFixture.create('python_subscriber', {
      LOOPFLEET_TOOLS: example('tools/weather.js'),
    });
    await fleet.startWorker();
  });

  afterAll(async () => {
    await fleet?.close();
  });

  /** Starts the script; resolves with its output once it exited. */
  function subscribe(args: string[]): Promise<Run> {
    const child = spawn(python!, [SCRIPT, ...args, '--redis', fleet.config.redisUrl, '--queue', fleet.config.queueName, '--timeout', '30'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    return new Promise<Run>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  }

  it('prints every event of the input, a tool call included, and stops at input_finished', async () => {
    const sessionId = 'py-weather';
    // `--after 0` reads the stream from its start, so nothing the worker writes before the script's
    // first read is missed.
    const run = subscribe([sessionId, '--after', '0']);
    await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: '/tool get_weather {"city":"Paris"}' } });
    const { code, stdout, stderr } = await run;
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    const types = lines.slice(0, -1).map((line) => line.split(' ')[1]);
    // The fleet's accept path publishes no input_accepted (SessionQueue.add does): the run's first event leads.
    expect(types[0]).toBe('input_started');
    expect(types).toContain('tool_call_started');
    expect(types).toContain('tool_call_completed');
    expect(types.at(-1)).toBe('input_finished');
    // Each line is `<stream id> <type> <data JSON>`, with the envelope's seq counting 1, 2, 3 …
    const seqs = lines.slice(0, -1).map((line) => (JSON.parse(line.split(' ').slice(2).join(' ')) as { seq: number }).seq);
    expect(seqs).toEqual(seqs.map((_, index) => index + 1));
    expect(lines.at(-1)).toBe('finished: input 1 completed: get_weather returned: {"city":"Paris","unit":"celsius","temperature":20,"conditions":"sunny"}');
  });

  it('--input-seq waits for that input, past the ones before it', async () => {
    const sessionId = 'py-second';
    await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'first' } });
    await fleet.waitForSessionFinished(sessionId, 1);
    const run = subscribe([sessionId, '--after', '0', '--input-seq', '2']);
    await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'second' } });
    const { code, stdout } = await run;
    expect(code).toBe(0);
    expect(stdout.match(/ input_finished /g)).toHaveLength(2);
    expect(stdout.trim().split('\n').at(-1)).toBe('finished: input 2 completed: Echo: second');
  });
});
