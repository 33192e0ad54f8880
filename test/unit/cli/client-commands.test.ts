import { describe, expect, it } from 'vitest';
import { overviewHelp } from '../../../src/cli/help.js';

const HELP = overviewHelp();
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

  it('documents the exit codes, not found and the follow ones among them', () => {
    const text = HELP.replace(/\s+/g, ' ');
    for (const line of ['3 not found', '10 send --follow: waiting_for_input', '11 send --follow: hit_round_limit', '12 send --follow: budget_exceeded', '13 send --follow: degraded', '14 send --follow: cancelled']) {
      expect(text).toContain(line);
    }
  });

  it.each([
    [['send'], "missing required argument 'session'"],
    [['send', 's1'], "missing required argument 'text'"],
    [['send', 's1', 'hi', 'extra'], 'too many arguments'],
    [['send', 's1', ''], 'the text must not be empty'],
    [['send', 's1', '  '], 'the text must not be empty'],
    [['send', 's1', 'hi', '--mode', 'sideways'], '--mode must be one of'],
    [['send', 's1', 'hi', '--input-id', 'has space'], '--input-id'],
    [['send', 's1', 'hi', '--bogus'], '--bogus'],
    [['send', 's1', 'hi', '--agent', 'a b'], '--agent must be 1 to 64'],
    [['agents', 'extra'], 'too many arguments'],
    [['agents', '--all'], '--all'],
    [['stats'], "missing required argument 'session'"],
    [['stats', 's1', 's2'], 'too many arguments'],
    [['tail'], "missing required argument 'session'"],
    [['tail', 's1', '--after', 'yesterday'], '--after must be a stream id'],
    [['tail', 's1', '--limit', '0'], '--limit must be a whole number from 1 to 1000000'],
    [['history'], "missing required argument 'session'"],
    [['history', 's1', 's2'], 'too many arguments'],
    [['history', 's1', '--limit', '0'], '--limit must be a whole number from 1 to 1000000'],
    [['history', 's1', '--limit', '1000001'], '--limit must be a whole number from 1 to 1000000'],
    [['history', 's1', '--limit', '1e3'], '--limit must be a whole number from 1 to 1000000'],
    [['history', 's1', '--after', 'x'], '--after must be a whole number from 0 to 9007199254740991'],
    [['history', 's1', '--after', '1.5'], '--after must be a whole number from 0 to 9007199254740991'],
    [['history', 's1', '--after', '9007199254740992'], '--after must be a whole number from 0 to 9007199254740991'],
    [['history', 's1', '--after=-1'], '--after must be a whole number from 0 to 9007199254740991'],
    [['cancel'], "missing required argument 'session'"],
    [['resume'], "missing required argument 'session'"],
    [['abort-pending'], "missing required argument 'session'"],
    [['abort-pending', 's1', '--reason'], '--reason'],
    [['submit-input', 's1', 'call_1'], "missing required argument 'value'"],
    [['submit-input', 's1', '', 'yes'], 'the interaction id must be 1 to 200 characters'],
    [['submit-input', 's1', 'c'.repeat(201), 'yes'], 'the interaction id must be 1 to 200 characters'],
    [['abort-pending', 's1', '--reason', 'r'.repeat(501)], '--reason must be at most 500 characters, got 501'],
    [['timer', 's1'], "missing required argument 'note'"],
    [['timer', 's1', '  ', '--in', '0'], 'the note must not be empty'],
    [['timer', 's1', 'wake'], 'give exactly one of --in and --at'],
    [['timer', 's1', 'wake', '--in', '0', '--at', '2026-11-25T09:00:00Z'], 'give exactly one of --in and --at'],
    [['timer', 's1', 'wake', '--in=-1'], '--in must be a duration such as 90s'], [['timer', 's1', 'wake', '--in', '367d'], '--in must be from 0ms to 366d'],
    [['timer', 's1', 'wake', '--in', '1e3'], '--in must be a duration such as 90s'],
    [['timer', 's1', 'wake', '--in', '0', '--every', '999'], '--every must be from 1s to 366d'],
    [['timer', 's1', 'wake', '--at', 'tomorrow'], '--at must be an ISO 8601 time'],
    [['timer', 's1', 'wake', '--at', '2026-13-45'], '--at must be an ISO 8601 time'],
    [['timer', 's1', 'wake', '--at', '9999-01-01T00:00:00Z'], '--at must be within 366 days of now; got 9999-01-01T00:00:00.000Z'],
    [['timer', 's1', 'wake', '--at', '1970-01-21T00:00:00Z'], '--at must be within 366 days of now'],
    [['timer', 's1', 'wake', '--in', '0', '--id', 'has space'], '--id must be 1 to 100'],
    [['timers'], "missing required argument 'session'"],
    [['cancel-timer', 's1'], "missing required argument 'timer'"],
    [['cancel-timer', 's1', 'has space'], 'the timer id must be 1 to 100'],
    [['send', 's1', 'hi', '--help-me'], "unknown option '--help-me'"],
    [['sessions', 'extra'], 'too many arguments'],
    [['sessions', '--limit', '201'], '--limit must be a whole number from 1 to 200'],
    [['describe'], "missing required argument 'session'"],
    [['result', 's1'], "missing required argument 'seq'"],
    [['result', 's1', 'first'], '--seq must be a whole number'],
    [['result', 's1', '1', '--wait', 'soon'], '--wait must be a duration such as 90s'],
    [['delete'], "missing required argument 'session'"],
    [['tail', 's1', '--no-follow', '--after', 'x'], '--after must be a stream id'],
  ])('%j exits 2 before touching configuration or services', async (argv, message) => {
    // An invalid configuration proves the arguments were rejected first: it would otherwise exit 1.
    const run = capture({ REDIS_URL: 'mysql://nope' });
    expect(await runCli(argv, run.io)).toBe(2);
    expect(run.err()).toContain(message);
  });

  it.each([
    [['send', 's1', 'hi', '--mode', 'queue', '--mode', 'steer'], '--mode'],
    [['send', 's1', 'hi', '--mode=queue', '--mode', 'queue'], '--mode'],
    [['send', 's1', 'hi', '--input-id', 'a', '--input-id', 'b'], '--input-id'],
    [['send', 's1', 'hi', '--follow', '--follow'], '--follow'],
    [['tail', 's1', '--after', '0', '--after', '1-0'], '--after'],
    [['tail', 's1', '--limit', '1', '--limit', '2'], '--limit'],
    [['tail', 's1', '--json', '--json'], '--json'],
    [['history', 's1', '--all', '--all'], '--all'],
    [['history', 's1', '--after', '1', '--after', '2'], '--after'],
    [['history', 's1', '--limit', '1', '--limit', '2'], '--limit'],
    [['abort-pending', 's1', '--reason', 'a', '--reason', 'b'], '--reason'],
    [['worker', '--grace', '5', '--grace', '6'], '--grace'],
    [['migrate', '--create-database', '--create-database'], '--create-database'],
    [['sessions', '--limit', '1', '--limit=2'], '--limit'],
    [['result', 's1', '1', '--wait', '--wait', '5m'], '--wait'],
  ])('%j: a repeated option exits 2 naming it, before touching configuration or services', async (argv, option) => {
    const run = capture({ REDIS_URL: 'mysql://nope' });
    expect(await runCli(argv, run.io)).toBe(2);
    expect(run.err()).toContain(`option ${option} given more than once`);
  });

  it.each([
    ...['0x10', '1e3', ' 5', '5 ', '+5', '-1', '1.5', '', '0', '1000001', '99999999999999999999'].map((value) => ['tail', value] as const),
    ...['1e10', '', ' 5', '0x10', '-1', '1.0', '2147483648', '1e3', '25d'].map((value) => ['worker', value] as const),
  ])('%s: a malformed or out-of-range number %j exits 2 naming the option and the range', async (command, value) => {
    const option = command === 'tail' ? '--limit' : '--grace';
    // parseArgs itself refuses `--limit -1` (a value that looks like an option): pass those inline.
    const given = value.startsWith('-') ? [`${option}=${value}`] : [option, value];
    const [argv, expected] =
      command === 'tail' ? [['tail', 's1', ...given], '--limit must be a whole number from 1 to 1000000'] : [['worker', ...given], '--grace must be'];
    const run = capture({ REDIS_URL: 'mysql://nope' });
    expect(await runCli(argv, run.io)).toBe(2);
    expect(run.err()).toContain(expected);
    expect(run.err()).toContain(`got ${JSON.stringify(value)}`);
  });

  it.each([
    ['tail', 's1', '--limit', '1'],
    ['tail', 's1', '--limit', '1000000'],
    ['tail', 's1', '--limit=007'],
    ['history', 's1', '--after', '0', '--limit', '1'],
    ['history', 's1', '--after', '9007199254740991', '--limit', '1000000'],
    ['worker', '--grace', '0'],
    ['worker', '--grace', '2147483647'],
    ['worker', '--grace', '90s'],
    ['worker', '--grace', '5m'],
  ])('%j: a number within range is accepted (it gets as far as the configuration)', async (...argv) => {
    const run = capture({ REDIS_URL: 'mysql://nope' });
    expect(await runCli(argv, run.io)).toBe(1);
    expect(run.err()).toContain('[config.invalid]');
  });

  it.each([...COMMAND_NAMES])('%s: <name> --help and help <name> print the same help, exit 0', async (name) => {
    const flag = capture();
    const word = capture();
    expect(await runCli([name, '--help'], flag.io)).toBe(0);
    expect(await runCli(['help', name], word.io)).toBe(0);
    expect(flag.out()).toBe(word.out());
    expect(flag.out()).toMatch(name === 'help' ? /^loopfleet — / : new RegExp(`^Usage: loopfleet ${name} `));
    expect(flag.err()).toBe('');
  });

  it("each command's help states the accepted number ranges", async () => {
    const help = async (name: string): Promise<string> => {
      const run = capture();
      expect(await runCli(['help', name], run.io)).toBe(0);
      return run.out().replace(/\s+/g, ' ');
    };
    expect(await help('worker')).toContain('default 30s, up to 2147483647 ms');
    expect(await help('tail')).toContain('--limit <n> exit after n lines (1 to 1000000)');
    expect(await help('history')).toContain('Usage: loopfleet history [options] <session>');
    expect(await help('history')).toContain('--limit <n> stop after n messages (1 to 1000000)');
    expect(await help('history')).toContain('unknown or repeated option, malformed value');
  });

  it.each([['send', 's1', 'hi'], ['tail', 's1'], ['history', 's1'], ['cancel', 's1'], ['resume', 's1'], ['abort-pending', 's1'], ['submit-input', 's1', 'c', 'v'], ['timer', 's1', 'wake', '--in', '0'], ['timers', 's1'], ['cancel-timer', 's1', 't1']])(
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
