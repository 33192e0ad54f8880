/**
 * The folder rules of `src/`, checked in CI by `npm run lint:deps` (dependency-cruiser). What each
 * rule protects is in docs/architecture.md ("Folders and their rules"). A rule that fails names the
 * importing file and the imported one.
 */
const IO_PACKAGES = '(^|/)node_modules/(bullmq|ioredis|pg|pg-connection-string|drizzle-orm|openai|@anthropic-ai/sdk|prom-client|pino|pino-pretty)/';
const IO_BUILTINS = '^(node:)?(net|http|https|http2|fs|fs/promises|child_process|dgram|tls|worker_threads|cluster)$';

/** A top-level folder of src and everything below it. */
const folder = (name) => `^src/${name}/`;

module.exports = {
  forbidden: [
    {
      name: 'core-imports-no-folder',
      comment: 'src/core is the pure loop: it talks to ports and imports no other folder of src.',
      severity: 'error',
      from: { path: folder('core') },
      to: { path: '^src/', pathNot: folder('core') },
    },
    {
      name: 'core-imports-no-io',
      comment: 'src/core imports no I/O package (database, Redis, queue, HTTP, LLM SDK, metrics, logger, files, processes).',
      severity: 'error',
      from: { path: folder('core') },
      to: { dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown', 'core', 'unknown'], path: [IO_PACKAGES, IO_BUILTINS] },
    },
    {
      name: 'fleet-imports-only-core',
      comment: 'src/fleet is the protocol producer and worker share: it builds on src/core and nothing else of src.',
      severity: 'error',
      from: { path: folder('fleet') },
      to: { path: '^src/', pathNot: [folder('fleet'), folder('core')] },
    },
    {
      name: 'agents-import-only-definitions',
      comment: 'src/agents is what an agent is made of (definition, version, defaults): data and checks, built on core, config, the fleet\'s name rules and the MCP server specs; it opens nothing.',
      severity: 'error',
      from: { path: folder('agents') },
      to: { path: '^src/', pathNot: [folder('agents'), folder('core'), folder('config'), folder('fleet'), folder('mcp')] },
    },
    {
      name: 'mcp-imports-core-and-observability',
      comment: 'src/mcp gives the worker tools from MCP servers: it builds on src/core (and the redaction of src/observability), never on worker or producer.',
      severity: 'error',
      from: { path: folder('mcp') },
      to: { path: '^src/', pathNot: [folder('mcp'), folder('core'), '^src/observability/redaction[.]ts$'] },
    },
    {
      name: 'worker-not-producer',
      comment: 'The worker and the producer stand side by side on fleet, events and store; neither imports the other.',
      severity: 'error',
      from: { path: folder('worker') },
      to: { path: folder('producer') },
    },
    {
      name: 'producer-not-worker',
      comment: 'The worker and the producer stand side by side on fleet, events and store; neither imports the other.',
      severity: 'error',
      from: { path: folder('producer') },
      to: { path: folder('worker') },
    },
    {
      name: 'gateway-builds-on-the-client',
      comment: 'src/gateway is the HTTP front door: it builds on producer, events, fleet, core, config and observability, never on worker or store.',
      severity: 'error',
      from: { path: folder('gateway') },
      to: { path: '^src/', pathNot: [folder('gateway'), folder('producer'), folder('events'), folder('fleet'), folder('core'), folder('config'), folder('observability')] },
    },
    {
      name: 'only-cli-imports-gateway',
      comment: 'Nothing but the CLI (which loads it lazily) imports src/gateway, so Fastify stays out of the library and the worker.',
      severity: 'error',
      from: { path: '^src/', pathNot: [folder('gateway'), folder('cli')] },
      to: { path: folder('gateway') },
    },
    {
      name: 'no-cycle-between-folders',
      comment: 'The top-level folders of src form layers: no folder reaches back to one that depends on it.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/[^/]+$' },
      to: { path: '^src/[^/]+$', circular: true },
    },
    {
      name: 'no-cycle-in-core',
      comment: 'No file of src/core reaches itself through its imports.',
      severity: 'error',
      from: { path: folder('core') },
      to: { circular: true },
    },
    {
      name: 'no-unresolvable-import',
      comment: 'Every relative import names a file that exists.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.json'],
    },
  },
};
