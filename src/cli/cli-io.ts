/** Where a command writes and what it reads: injected so the CLI can be run in-process by tests. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** The whole of standard input, for `send <session> -`. Absent: no input to read (tests in process). */
  readStdin?: () => Promise<string>;
  /** Whether stdout is a terminal: colour is used only then, and never with `NO_COLOR` set. */
  isTty?: boolean;
}

/** Exit codes of the `loopfleet` command (the help and docs/cli.md list them). */
export const EXIT = {
  ok: 0,
  /** Bad configuration, an unreachable Postgres or Redis, or a failed command. */
  failure: 1,
  /** The command line itself was wrong (unknown command or flag). */
  usage: 2,
  /** What the command names does not exist: a session, an input, a timer, a budget, a tenant's settings. */
  notFound: 3,
} as const;

/** Error codes that mean "no such thing": every one exits {@link EXIT.notFound}. */
export const NOT_FOUND_CODES: ReadonlySet<string> = new Set(['session.not_found', 'input.not_found', 'agent.not_found', 'budget.not_found']);
