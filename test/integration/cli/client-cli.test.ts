import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/run-cli.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { runCliInProcess } from '../../support/run-cli-process.js';
import { Gates, routingLlm } from '../producer/routing-llm.js';

describe('loopfleet client commands against a running fleet', () => {
  let fleet: FleetFixture;
  let env: NodeJS.ProcessEnv;
  const gates = new Gates();

  /** Runs the CLI in-process with this fleet's environment; resolves with the exit code and output. */
  const cli = (...argv: string[]) => runCliInProcess(argv, env);

  beforeAll(async () => {
    fleet = await FleetFixture.create('cli_client');
    await fleet.startWorker({ llm: routingLlm(gates) });
    env = { DATABASE_URL: fleet.config.databaseUrl, REDIS_URL: fleet.config.redisUrl, LOOPFLEET_QUEUE: fleet.config.queueName, LLM_PROVIDER: 'scripted' };
  });

  afterAll(async () => {
    gates.openAll();
    await fleet?.close();
  });

  it('send --follow prints the reply as it streams and exits 0', async () => {
    const run = await cli('send', 'cli-1', 'hello there', '--follow');
    expect(run).toMatchObject({ code: 0 });
    expect(run.out).toBe('accepted cli-1 seq 1\nEcho: hello there\n');
    expect(run.err).toContain('status completed');
  });

  it('send --follow ends, with the outcome from Postgres, when the input_finished never reaches the stream it follows', async () => {
    expect(await cli('send', 'cli-lost', 'hold:cli-lost', '--input-id', 'lost-1')).toMatchObject({ code: 0, out: 'accepted cli-lost seq 1\n' });
    // The same input sent again through another queue name (same database): the workers never write
    // to that queue's streams, so the follow never sees the input_finished. The session is made one
    // from before queues were recorded, so the duplicate add is taken on the other queue.
    await fleet.waitFor('the run to start', async () => ((await fleet.store.getInput('cli-lost', 1))?.status === 'running' ? true : undefined));
    await fleet.pool.query(`UPDATE sessions SET queue = '' WHERE id = 'cli-lost'`);
    const out: string[] = [];
    const err: string[] = [];
    const blindEnv = Object.assign({}, env, { LOOPFLEET_QUEUE: `${fleet.config.queueName}_y` });
    const following = runCli(['send', 'cli-lost', 'hold:cli-lost', '--input-id', 'lost-1', '--follow'], { stdout: (text) => void out.push(text), stderr: (text) => void err.push(text), env: blindEnv });
    let timer: NodeJS.Timeout | undefined;
    try {
      // Following has begun (its first Postgres read is on its way) before the input can finish.
      await fleet.waitFor('the duplicate accepted', async () => (out.length > 0 ? true : undefined));
      gates.open('cli-lost');
      const expired = new Promise<never>((_, reject) => {
        // Two re-reads of Postgres (2 s apart by default) plus slack.
        timer = setTimeout(() => reject(new Error('send --follow did not end after the input settled')), 20_000);
      });
      expect(await Promise.race([following, expired])).toBe(0);
      expect(out.join('')).toBe('accepted cli-lost seq 1 (duplicate)\nheld cli-lost\n');
      expect(err.join('')).toContain('status completed');
    } finally {
      clearTimeout(timer);
      await fleet.deleteKeys(`bull:${fleet.config.queueName}_y:*`);
      await fleet.deleteKeys(`${fleet.config.queueName}_y:*`);
    }
  });

  it('send without --follow prints the seq; --input-id makes a retry a duplicate', async () => {
    expect(await cli('send', 'cli-2', 'first', '--input-id', 'msg-1')).toMatchObject({ code: 0, out: 'accepted cli-2 seq 1\n' });
    expect(await cli('send', 'cli-2', 'first', '--input-id', 'msg-1')).toMatchObject({ code: 0, out: 'accepted cli-2 seq 1 (duplicate)\n' });
    await fleet.waitForSessionIdle('cli-2', 1);
  });

  it('history prints the messages, as text and as JSON lines', async () => {
    await fleet.waitForSessionIdle('cli-1', 1);
    const text = await cli('history', 'cli-1');
    expect(text).toMatchObject({ code: 0, out: '1 #1 user: hello there\n2 #1 assistant: Echo: hello there\n' });
    const json = await cli('history', 'cli-1', '--json');
    expect(json.code).toBe(0);
    const rows = json.out.trim().split('\n').map((line) => JSON.parse(line) as { seq: number; message: { role: string; content: string } });
    expect(rows.map((row) => [row.seq, row.message.role, row.message.content])).toEqual([
      [1, 'user', 'hello there'],
      [2, 'assistant', 'Echo: hello there'],
    ]);
    expect(await cli('history', 'cli-nobody')).toMatchObject({ code: 3, err: expect.stringContaining('[session.not_found]') });
  });

  it("runs beside a host application's own LOG_LEVEL, LOG_FORMAT and METRICS_PORT, which only a worker reads", async () => {
    await fleet.waitForSessionIdle('cli-1', 1);
    const hostEnv = env;
    env = Object.assign({}, hostEnv, { LOG_LEVEL: 'warning', LOG_FORMAT: 'text', METRICS_PORT: 'http' });
    try {
      expect(await cli('history', 'cli-1')).toMatchObject({ code: 0, err: '', out: expect.stringContaining('1 #1 user: hello there') });
    } finally {
      env = hostEnv;
    }
  });

  it('tail --after 0 --limit n prints the events from the beginning', async () => {
    const run = await cli('tail', 'cli-1', '--after', '0', '--limit', '3');
    expect(run.code).toBe(0);
    const lines = run.out.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^\d+-\d+ {2}input_accepted #1 {2}\{"kind":"send","mode":"queue","inputId":"[^"]+"\}$/);
    expect(lines[1]).toMatch(/^\d+-\d+ {2}input_started #1 {2}/);
    const json = await cli('tail', 'cli-1', '--after', '0', '--limit', '1', '--json');
    expect(JSON.parse(json.out)).toMatchObject({ kind: 'event', type: 'input_accepted', data: { sessionId: 'cli-1', inputSeq: 1, seq: 1 } });
  });

  it('tail prints a gap marker when the cursor is older than the stream', async () => {
    await fleet.redis.xtrim(`${fleet.config.queueName}:events:cli-1`, 'MAXLEN', 2);
    const run = await cli('tail', 'cli-1', '--after', '1-0', '--limit', '2');
    expect(run.code).toBe(0);
    expect(run.out.split('\n')[0]).toMatch(/^--- GAP: events after 1-0 are no longer in the stream \(oldest retained: \d+-\d+\)/);
  });

  it('a question exits 10, submit-input answers it, abort-pending closes another', async () => {
    const asked = await cli('send', 'cli-ask', 'ask:Pick a number', '--follow');
    expect(asked.code).toBe(10);
    expect(asked.err).toContain('Pick a number');
    const interactionId = (await fleet.store.getSession('cli-ask'))!.pending!.interactions[0]!.interactionId;
    expect(await cli('submit-input', 'cli-ask', interactionId, '42')).toMatchObject({ code: 0, out: 'accepted cli-ask seq 2\n' });
    const inputs = await fleet.waitForSessionIdle('cli-ask', 2);
    expect(inputs[1]?.result?.finalText).toBe('Got: 42');
    expect(inputs[1]?.payload).toEqual({ submit: { interactionId, value: 42 } });

    expect((await cli('send', 'cli-abort', 'ask:Continue?', '--follow')).code).toBe(10);
    expect(await cli('abort-pending', 'cli-abort', '--reason', 'no answer')).toMatchObject({ code: 0, out: 'accepted cli-abort seq 2\n' });
    await fleet.waitForSessionIdle('cli-abort', 2);
    expect((await fleet.store.getSession('cli-abort'))?.pending).toBeNull();
    expect(await cli('resume', 'cli-abort')).toMatchObject({ code: 0, out: 'accepted cli-abort seq 3\n' });
    await fleet.waitForSessionIdle('cli-abort', 3);
  });

  it('submit-input --follow streams the reply and exits with its status; --json prints the outcome', async () => {
    expect((await cli('send', 'cli-ask-follow', 'ask:Pick a colour', '--follow')).code).toBe(10);
    const interactionId = (await fleet.store.getSession('cli-ask-follow'))!.pending!.interactions[0]!.interactionId;
    const answered = await cli('submit-input', 'cli-ask-follow', interactionId, 'blue', '--follow');
    expect(answered).toMatchObject({ code: 0, out: 'accepted cli-ask-follow seq 2\nGot: blue\n' });
    expect(answered.err).toContain('status completed');
    expect((await cli('send', 'cli-ask-follow', 'ask:And a number', '--follow')).code).toBe(10);
    const second = (await fleet.store.getSession('cli-ask-follow'))!.pending!.interactions[0]!.interactionId;
    const json = await cli('submit-input', 'cli-ask-follow', second, '7', '--follow', '--json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out)).toMatchObject({ sessionId: 'cli-ask-follow', seq: 4, status: 'completed', finalText: 'Got: 7' });
  });

  it.each([
    ['cli-ask-big', '12345678901234567890'],
    ['cli-ask-fine', '0.1000000000000000055511151231257827'],
    ['cli-ask-nested', '{"amount": 12345678901234567890}'],
  ])('submit-input keeps every digit of a number a JS number would change (%s): it is sent as the text typed', async (sessionId, value) => {
    expect((await cli('send', sessionId, 'ask:Your order number?', '--follow')).code).toBe(10);
    const interactionId = (await fleet.store.getSession(sessionId))!.pending!.interactions[0]!.interactionId;
    expect(await cli('submit-input', sessionId, interactionId, value)).toMatchObject({ code: 0, out: `accepted ${sessionId} seq 2\n` });
    const inputs = await fleet.waitForSessionIdle(sessionId, 2);
    expect(inputs[1]?.payload).toEqual({ submit: { interactionId, value } });
    expect(inputs[1]?.result?.finalText).toBe(`Got: ${value}`);
  });

  it('cancel ends a followed input with exit code 14; an unknown session exits 3 (not found)', async () => {
    const following = cli('send', 'cli-cancel', 'hold:cli-cancel', '--follow');
    await fleet.waitFor('the run to start', async () => ((await fleet.store.getInput('cli-cancel', 1))?.status === 'running' ? true : undefined));
    expect(await cli('cancel', 'cli-cancel')).toMatchObject({ code: 0, out: 'cancel requested for cli-cancel\n' });
    const run = await following;
    expect(run.code).toBe(14);
    expect(run.err).toContain('status cancelled');
    expect(await cli('cancel', 'cli-nobody')).toMatchObject({ code: 3, err: expect.stringContaining('no session cli-nobody') });
  });

  it('bad arguments exit 2 and write nothing', async () => {
    expect((await cli('send', 'bad id!', 'x')).code).toBe(2);
    expect((await cli('tail', 'bad id!', '--limit', '1')).code).toBe(2);
    // Not a stream: the key of session cli-1's event counter.
    expect(await cli('tail', 'cli-1:seq', '--after', '0', '--limit', '1')).toMatchObject({ code: 2, out: '', err: expect.stringContaining('[session.invalid_id] session id must not end in ":seq" or ":finished"') });
    expect((await cli('history', 'bad id!')).code).toBe(2);
    expect((await cli('send', 's', 'x', '--mode', 'sideways')).code).toBe(2);
    expect(await cli('send', 's', 'x', '--mode', 'queue', '--mode', 'steer')).toMatchObject({ code: 2, out: '', err: expect.stringContaining('option --mode given more than once') });
    expect(await cli('send', 's', 'x', '--input-id', 'a', '--input-id', 'b')).toMatchObject({ code: 2, out: '' });
    expect(await cli('tail', 'cli-1', '--after', '0', '--limit', '0x2')).toMatchObject({ code: 2, out: '', err: expect.stringContaining('--limit must be a whole number from 1 to 1000000') });
    expect(await cli('tail', 'cli-1', '--after', '0', '--limit', '1', '--limit', '2')).toMatchObject({ code: 2, out: '' });
    expect(await fleet.store.getSession('s')).toBeNull();
  });
});
