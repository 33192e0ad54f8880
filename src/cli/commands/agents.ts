import type { RegisteredAgent } from '../../core/ports/agent-registry.js';
import { guardedStoreCall } from '../../core/ports/guard-store.js';
import { withStore } from '../connect.js';
import { EXIT, type CliIo } from '../cli-io.js';
import { parseCommandLine } from '../command-line.js';

const USAGE = 'loopfleet agents [--json]';

/** The table's columns, in order. */
const HEADER = ['AGENT', 'VERSION', 'PROVIDER', 'MODEL', 'TOOLS', 'WORKERS (LAST SEEN, OR STOPPED)'];

/**
 * `loopfleet agents`: the agent registry — each agent the fleet serves now, by name then version, with
 * its provider, model, tools and the workers serving it with when each was last seen. `--json`: one
 * agent as JSON a line.
 */
export async function agentsCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({ args, allowPositionals: true, options: { json: { type: 'boolean', default: false } } });
  if (positionals.length > 0) {
    io.stderr(`loopfleet agents: takes no arguments, got "${positionals[0]!}"\nusage: ${USAGE}\n`);
    return EXIT.usage;
  }
  return withStore(io, async ({ registry }) => {
    const agents = await guardedStoreCall('listAgents', registry.listAgents());
    if (values.json) for (const agent of agents) io.stdout(`${JSON.stringify(agent)}\n`);
    else io.stdout(agents.length === 0 ? 'no agents registered (is a worker running?)\n' : formatAgents(agents));
    return EXIT.ok;
  });
}

/** The registry as a table, columns padded to their widest cell. */
export function formatAgents(agents: readonly RegisteredAgent[]): string {
  const rows = [HEADER, ...agents.map(agentCells)];
  const widths = HEADER.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => `${row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ')}\n`).join('');
}

function agentCells(agent: RegisteredAgent): string[] {
  const tools = agent.tools.length === 0 ? '-' : agent.tools.join(',');
  const workers = agent.workers.map((worker) => `${worker.workerId} (${worker.stoppedAt === null ? worker.seenAt.toISOString() : `stopped ${worker.stoppedAt.toISOString()}`})`).join(', ');
  return [agent.name, agent.version, agent.provider, agent.model, tools, workers];
}
