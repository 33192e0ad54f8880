import { COMMAND_SPECS, type CommandSpec } from './registry/index.js';

/** The exit codes, the same for every command (the overview and each command's help end with them). */
export const EXIT_CODES_HELP = `Exit codes:
  0    success (send --follow: completed)
  1    failure or invalid configuration (send --follow: failed); an unreachable Postgres or
       Redis prints "cannot reach <server> at <host>:<port>" within a few seconds
  2    bad command line (unknown command, unknown or repeated option, malformed value,
       missing argument, malformed session id)
  3    not found: no such session, input, timer, budget or tenant settings
  10   send --follow: waiting_for_input (answer with submit-input)
  11   send --follow: hit_round_limit
  12   send --follow: budget_exceeded
  13   send --follow: degraded (the model provider was unavailable)
  14   send --follow: cancelled
  130  send --follow: stopped following with Ctrl-C (the input keeps running)
`;

const ENVIRONMENT_HELP = `Environment (validated at start; see README for all of them):
  DATABASE_URL      Postgres connection string (default postgres://postgres:postgres@127.0.0.1:5432/loopfleet)
  REDIS_URL         Redis connection string (default redis://127.0.0.1:6379)
  REDIS_CLUSTER_NODES
                    host:port,... of a Redis Cluster; REDIS_URL then gives only its user,
                    password and scheme (default unset: one node; docs/redis-cluster.md)
  LOOPFLEET_QUEUE   BullMQ queue name and Redis key prefix (default loopfleet)
  LOOPFLEET_QUEUE_SHARDS
                    BullMQ queues dispatch is spread over on a Redis Cluster, 1-256;
                    the same in every process (default 1)
  LOG_LEVEL         worker only: fatal|error|warn|info|debug|trace|silent (default info)
  LOG_FORMAT        worker only: json|pretty (default pretty on a terminal, else json)
  GATEWAY_*         gateway only: port, host, JWT secret or JWKS URL, CORS, limits (docs/gateway.md)
  NO_COLOR          set: never colour the output (colour is used only on a terminal anyway)
`;

/** `name args` as the overview shows it. */
export function commandLine(spec: Pick<CommandSpec, 'name' | 'args'>): string {
  return spec.args === '' ? spec.name : `${spec.name} ${spec.args}`;
}

/** Where the summaries start: a longer command line puts its summary on the next line. */
const SUMMARY_COLUMN = 28;

/** One command of the overview: its line, then its summary in the summary column. */
function entry(spec: Pick<CommandSpec, 'name' | 'args' | 'summary'>): string {
  const line = `  ${commandLine(spec)}`;
  return line.length < SUMMARY_COLUMN - 1 ? `${line.padEnd(SUMMARY_COLUMN)}${spec.summary}\n` : `${line}\n${' '.repeat(SUMMARY_COLUMN)}${spec.summary}\n`;
}

/** The overview: every command with its one line, grouped, then the environment and exit codes. */
export function overviewHelp(): string {
  const groups = new Map<string, CommandSpec[]>();
  for (const spec of COMMAND_SPECS) groups.set(spec.group, [...(groups.get(spec.group) ?? []), spec]);
  const sections = [...groups].map(([group, specs]) => `${group}:\n${specs.map(entry).join('')}`);
  const other = `Other:\n${entry({ name: 'help', args: '[command]', summary: "Show this help, or a command's (also: <command> --help)" })}${entry({ name: 'version', args: '', summary: 'Print the version (also: -v, --version)' })}`;
  return `loopfleet — durable AI-agent sessions on a worker fleet

Usage:
  loopfleet <command> [options]
  loopfleet help <command>      options and details of one command

Every command takes --json (JSON on stdout) and --help.

${[...sections, other].join('\n')}
${ENVIRONMENT_HELP}
${EXIT_CODES_HELP}`;
}

/** The registry as data, for `help --json`: names, operands, summaries and options. */
export function helpJson(): string {
  const commands = COMMAND_SPECS.map((spec) => ({ name: spec.name, group: spec.group, args: spec.args, summary: spec.summary, options: spec.options }));
  return `${JSON.stringify({ commands })}\n`;
}
