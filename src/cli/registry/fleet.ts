import { FORCED_EXIT_MS, WORKER_GRACE_MS } from '../limits.js';
import { JSON_OPTION, type CommandSpec } from './types.js';

/** Commands that run or set up the fleet. */
export const FLEET_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'worker',
    group: 'Fleet',
    args: '',
    summary: 'Run a worker until SIGTERM/SIGINT',
    options: [
      { flags: '--grace <duration>', description: `how long running inputs may finish after the first signal: 30s, 5m or ms (default 30s, up to ${WORKER_GRACE_MS.max} ms)` },
      { flags: '--json', description: 'log as JSON lines (LOG_FORMAT=json)' },
    ],
    details: `The first signal stops taking work and lets running inputs finish for up to --grace; a second
signal aborts them and hands their sessions to other workers, and exits 1 if the close has not
finished ${FORCED_EXIT_MS / 1000} s later. A failed start or close exits 1. Start it as
node --max-semi-space-size=32 (npm run worker, compose): less GC per input for a little memory.`,
    load: async () => (await import('../commands/worker.js')).workerCommand,
  },
  {
    name: 'gateway',
    group: 'Fleet',
    args: '',
    summary: 'Serve the HTTP/SSE API under /v1 and the session viewer at /',
    options: [
      { flags: '--port <n>', description: 'port to listen on (wins over GATEWAY_PORT, default 8080)' },
      { flags: '--host <address>', description: 'address to listen on (wins over GATEWAY_HOST, default 127.0.0.1)' },
      { flags: '--json', description: 'print {"url": …} once listening' },
    ],
    details: 'Runs until SIGTERM/SIGINT (docs/gateway.md).',
    load: async () => (await import('../commands/gateway.js')).gatewayCommand,
  },
  {
    name: 'migrate',
    group: 'Fleet',
    args: '',
    summary: 'Apply the committed database migrations to DATABASE_URL',
    options: [{ flags: '--create-database', description: 'create the database first if it is missing' }, JSON_OPTION],
    details: 'Idempotent; safe when several processes run it at once.',
    load: async () => (await import('../commands/migrate.js')).migrateCommand,
  },
  {
    name: 'agents',
    group: 'Fleet',
    args: '',
    summary: 'List the agents the fleet serves now',
    options: [JSON_OPTION],
    details: 'Name, version, provider, model, tools, and each worker serving it with when it was last seen.',
    load: async () => (await import('../commands/agents.js')).agentsCommand,
  },
];
