import { describe, expect, it } from 'vitest';
import { HELP } from '../../../src/cli/help.js';
import { COMMAND_NAMES, runCli } from '../../../src/cli/run-cli.js';

function capture(env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: { stdout: (text: string) => void out.push(text), stderr: (text: string) => void err.push(text), env },
    out: () => out.join(''),
    err: () => err.join(''),
  };
}

/** Command names as the help lists them: the first word of each two-space-indented entry. */
function helpCommands(): string[] {
  const section = HELP.slice(HELP.indexOf('Fleet:'), HELP.indexOf('Environment'));
  return [...section.matchAll(/^ {2}([a-z][a-z-]*)\b/gm)].map((match) => match[1]!);
}

describe('loopfleet client commands (no services needed)', () => {
  it('the help lists exactly the commands that exist', () => {
    expect(helpCommands().sort()).toEqual([...COMMAND_NAMES].sort());
    for (const name of ['send', 'tail', 'history', 'cancel', 'resume', 'abort-pending', 'submit-input', 'worker', 'migrate', 'help', 'version']) {
      expect(COMMAND_NAMES).toContain(name);
    }
  });

  it('documents the follow exit codes', () => {
    for (const line of ['10  send --follow: waiting_for_input', '11  send --follow: hit_round_limit', '12  send --follow: budget_exceeded', '13  send --follow: degraded', '14  send --follow: cancelled']) {
      expect(HELP).toContain(line);
    }
  });

  it.each([
    [['send'], 'expected a session and a text'],
    [['send', 's1'], 'expected a session and a text'],
    [['send', 's1', 'hi', 'extra'], 'expected a session and a text'],
    [['send', 's1', 'hi', '--mode', 'sideways'], '--mode must be one of'],
    [['send', 's1', 'hi', '--input-id', 'has space'], '--input-id'],
    [['send', 's1', 'hi', '--bogus'], '--bogus'],
    [['tail'], 'expected one session'],
    [['tail', 's1', '--after', 'yesterday'], '--after must be a stream id'],
    [['tail', 's1', '--limit', '0'], '--limit must be a positive integer'],
    [['history'], 'expected one session'],
    [['history', 's1', 's2'], 'expected one session'],
    [['cancel'], 'expected one session'],
    [['resume'], 'expected one session'],
    [['abort-pending'], 'expected one session'],
    [['abort-pending', 's1', '--reason'], '--reason'],
    [['submit-input', 's1', 'call_1'], 'expected a session, an interaction id and a value'],
  ])('%j exits 2 before touching configuration or services', async (argv, message) => {
    // An invalid configuration proves the arguments were rejected first: it would otherwise exit 1.
    const run = capture({ REDIS_URL: 'mysql://nope' });
    expect(await runCli(argv, run.io)).toBe(2);
    expect(run.err()).toContain(message);
  });

  it.each([['send', 's1', 'hi'], ['tail', 's1'], ['history', 's1'], ['cancel', 's1'], ['resume', 's1'], ['abort-pending', 's1'], ['submit-input', 's1', 'c', 'v']])(
    '%j exits 1 naming the variable when configuration is invalid, before connecting',
    async (...argv) => {
      const run = capture({ DATABASE_URL: 'postgres://x:hunter2@127.0.0.1:1/db', LOOPFLEET_QUEUE: 'bad:name' });
      expect(await runCli(argv, run.io)).toBe(1);
      expect(run.err()).toContain('[config.invalid]');
      expect(run.err()).toContain('LOOPFLEET_QUEUE');
      expect(run.err()).not.toContain('hunter2');
    },
  );
});
