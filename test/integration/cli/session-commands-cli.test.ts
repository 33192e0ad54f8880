import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/run-cli.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { runCliInProcess } from '../../support/run-cli-process.js';
import { Gates, routingLlm } from '../producer/routing-llm.js';

/** Output of a --json command: one JSON value a line (none for an empty list). */
function jsonLines(out: string): unknown[] {
  return out === '' ? [] : out.trim().split('\n').map((line) => JSON.parse(line) as unknown);
}

describe('loopfleet sessions, describe, result, delete, resume against a running fleet', () => {
  let fleet: FleetFixture;
  let env: NodeJS.ProcessEnv;
  const gates = new Gates();
  const cli = (...argv: string[]) => runCliInProcess(argv, env);

  beforeAll(async () => {
    fleet = await FleetFixture.create('cli_sessions');
    await fleet.startWorker({ llm: routingLlm(gates) });
    env = { DATABASE_URL: fleet.config.databaseUrl, REDIS_URL: fleet.config.redisUrl, LOOPFLEET_QUEUE: fleet.config.queueName };
    for (const id of ['ls-a', 'ls-b', 'ls-c']) expect(await cli('send', id, `hello ${id}`)).toMatchObject({ code: 0 });
    for (const id of ['ls-a', 'ls-b', 'ls-c']) await fleet.waitForSessionIdle(id, 1);
  });

  afterAll(async () => {
    gates.openAll();
    await fleet?.close();
  });

  it('sessions lists by prefix, newest first, a page at a time with --cursor', async () => {
    const all = await cli('sessions', '--prefix', 'ls-', '--json');
    expect(all.code).toBe(0);
    const page = JSON.parse(all.out) as { sessions: { id: string }[]; nextCursor: string | null };
    expect(page.sessions.map((s) => s.id).sort()).toEqual(['ls-a', 'ls-b', 'ls-c']);
    expect(page.nextCursor).toBeNull();
    const first = JSON.parse((await cli('sessions', '--prefix', 'ls-', '--limit', '2', '--json')).out) as typeof page;
    expect(first.sessions).toHaveLength(2);
    expect(first.nextCursor).not.toBeNull();
    const second = JSON.parse((await cli('sessions', '--prefix', 'ls-', '--limit', '2', '--cursor', first.nextCursor!, '--json')).out) as typeof page;
    expect([...first.sessions, ...second.sessions].map((s) => s.id).sort()).toEqual(['ls-a', 'ls-b', 'ls-c']);
    const text = await cli('sessions', '--prefix', 'ls-', '--limit', '2');
    expect(text.out).toMatch(/^SESSION +TENANT +AGENT +STATUS/);
    expect(text.err).toContain('# more: loopfleet sessions --cursor ');
    expect(await cli('sessions', '--status', 'asleep')).toMatchObject({ code: 2, err: expect.stringContaining('--status must be one of idle, running') });
    expect(JSON.parse((await cli('sessions', '--prefix', 'ls-', '--status', 'idle', '--json')).out)).toMatchObject({ sessions: expect.any(Array) });
  });

  it('describe shows status, agent, tenant, lease, counts, usage and cost; --json parses', async () => {
    const text = await cli('describe', 'ls-a');
    expect(text.code).toBe(0);
    for (const label of ['status    idle', 'agent     default', 'tenant    default', 'lease     none', 'inputs    1 (', 'usage', 'cost', 'last error none']) expect(text.out).toContain(label);
    const json = JSON.parse((await cli('describe', 'ls-a', '--json')).out) as { session: { id: string; tenant: string }; stats: { inputs: { done: number } }; lastError: unknown };
    expect(json).toMatchObject({ session: { id: 'ls-a', tenant: 'default' }, stats: { inputs: { done: 1 } }, lastError: null });
  });

  it('result prints one input outcome; --wait waits for one still running', async () => {
    expect(await cli('result', 'ls-a', '1')).toMatchObject({ code: 0, out: expect.stringContaining('Echo: hello ls-a') });
    expect(JSON.parse((await cli('result', 'ls-a', '1', '--json')).out)).toMatchObject({ sessionId: 'ls-a', seq: 1, settled: true, status: 'completed', finalText: 'Echo: hello ls-a' });
    expect(await cli('send', 'ls-held', 'hold:ls-held')).toMatchObject({ code: 0 });
    const waiting = cli('result', 'ls-held', '1', '--wait', '2m', '--json');
    gates.open('ls-held');
    const waited = await waiting;
    expect(waited.code).toBe(0);
    expect(JSON.parse(waited.out)).toMatchObject({ status: 'completed', finalText: 'held ls-held' });
  });

  it('an unknown session or input exits 3 (not found) in every command that names one', async () => {
    for (const argv of [['describe', 'ls-nobody'], ['result', 'ls-nobody', '1'], ['result', 'ls-a', '99'], ['delete', 'ls-nobody'], ['stats', 'ls-nobody'], ['history', 'ls-nobody'], ['cancel', 'ls-nobody'], ['resume', 'ls-nobody']]) {
      const run = await cli(...argv);
      expect(run, argv.join(' ')).toMatchObject({ code: 3, out: '' });
    }
  });

  it('resume refuses a session that does not exist, and creates none', async () => {
    expect(await cli('resume', 'ls-ghost')).toMatchObject({ code: 3, err: expect.stringContaining('[session.not_found]') });
    expect(await fleet.store.getSession('ls-ghost')).toBeNull();
    expect(JSON.parse((await cli('resume', 'ls-b', '--json')).out)).toMatchObject({ sessionId: 'ls-b', seq: 2, duplicate: false });
    await fleet.waitForSessionIdle('ls-b', 2);
  });

  it('delete removes the session; then it is not found', async () => {
    expect(JSON.parse((await cli('delete', 'ls-c', '--json')).out)).toEqual({ sessionId: 'ls-c', deleted: true });
    expect((await cli('describe', 'ls-c')).code).toBe(3);
    expect((await cli('delete', 'ls-c')).code).toBe(3);
  });

  it('send - reads the text from stdin', async () => {
    const out: string[] = [];
    const code = await runCli(['send', 'ls-stdin', '-', '--json'], { stdout: (text) => void out.push(text), stderr: () => {}, env, readStdin: async () => 'typed into a pipe\n' });
    expect(code).toBe(0);
    expect(JSON.parse(out.join(''))).toMatchObject({ sessionId: 'ls-stdin', seq: 1 });
    await fleet.waitForSessionIdle('ls-stdin', 1);
    expect(await fleet.transcript('ls-stdin')).toEqual(['user: typed into a pipe', 'assistant: Echo: typed into a pipe']);
  });

  it('--json output of the other commands parses', async () => {
    for (const argv of [['stats', 'ls-a', '--json'], ['history', 'ls-a', '--json'], ['tail', 'ls-a', '--no-follow', '--json'], ['agents', '--json'], ['timer', 'ls-a', 'wake', '--in', '1h', '--id', 't1', '--json'], ['timers', 'ls-a', '--json'], ['cancel-timer', 'ls-a', 't1', '--json'], ['cancel', 'ls-a', '--json'], ['usage', '--json'], ['tenant', 'list', '--json'], ['version', '--json'], ['help', '--json']]) {
      const run = await cli(...argv);
      expect(run.code, `${argv.join(' ')}: ${run.err}`).toBe(0);
      expect(() => jsonLines(run.out), argv.join(' ')).not.toThrow();
    }
  });

  it('tail --no-follow prints what the stream holds and exits', async () => {
    const run = await cli('tail', 'ls-a', '--no-follow');
    expect(run.code).toBe(0);
    const types = run.out.trim().split('\n').map((line) => line.split(/ {2}/)[1]);
    expect(types[0]).toBe('input_accepted #1');
    expect(types.at(-1)).toBe('input_finished #1');
    expect(await cli('tail', 'ls-empty-stream', '--no-follow')).toMatchObject({ code: 0, out: '' });
  });

  it('tail without --after says where it starts, and that it is waiting when nothing comes', async () => {
    const err: string[] = [];
    const stopped = runCli(['tail', 'ls-a', '--limit', '1'], { stdout: () => {}, stderr: (text) => void err.push(text), env });
    await fleet.waitFor('the quiet hint', async () => (err.join('').includes('no events yet; waiting') ? true : undefined));
    expect(err.join('')).toContain('# following new events of ls-a (--after 0 for those already in the stream)');
    expect(await cli('send', 'ls-a', 'wake the tail')).toMatchObject({ code: 0 });
    expect(await stopped).toBe(0);
  });
});
