/** Where a command writes and what it reads: injected so the CLI can be run in-process by tests. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

/** Exit codes of the `loopfleet` command. */
export const EXIT = {
  ok: 0,
  /** Bad configuration or a failed command. */
  failure: 1,
  /** The command line itself was wrong (unknown command or flag). */
  usage: 2,
} as const;
