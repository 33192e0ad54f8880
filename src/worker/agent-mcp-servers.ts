import type { Logger } from 'pino';
import type { ResolvedAgent } from '../agents/index.js';
import { ConfigInvalidError, LoopfleetError } from '../core/errors/index.js';
import { ToolRegistry } from '../core/tools/index.js';
import { startMcpServers, type McpServers, type McpServerStatus } from '../mcp/index.js';
import type { LiveTools } from './agent-catalog.js';

/** Where a server's up/down reports go once the worker's metrics exist. */
export type McpStatusSink = (status: McpServerStatus) => void;

/** The MCP servers of every agent a worker serves (docs/mcp.md). */
export interface AgentMcpServers {
  /** The live tool lists of `agent`'s servers (none when it lists no server). */
  forAgent(agent: string): LiveTools[];
  /** Sends every server's last status to `sink`, and each later one as it comes (the `up` gauge). */
  reportTo(sink: McpStatusSink): void;
  /** Calls `listener` after any server's tool list changed (`list_changed`, a restart). */
  onToolsChange(listener: () => void): void;
  /** Stops every server. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * Starts each agent's MCP servers, before the worker opens a connection: a required server that cannot
 * start fails start-up with an error naming the agent and the server (every server started so far is
 * closed); an optional one is absent, and says so in the log and the gauge. Each agent gets its own
 * processes and sessions, even when two agents list the same server.
 */
export async function startAgentMcpServers(agents: readonly ResolvedAgent[], logger: Logger): Promise<AgentMcpServers> {
  const statuses = new Map<string, McpServerStatus>();
  let sink: McpStatusSink | null = null;
  const onStatus = (status: McpServerStatus): void => {
    statuses.set(status.server, status);
    sink?.(status);
  };
  const started = new Map<string, McpServers>();
  try {
    for (const agent of agents) {
      if (agent.mcpServers.length === 0) continue;
      const specs = agent.mcpServers.map((mcp) => ({ mcp }));
      const servers = await startMcpServers(specs, { logger: logger.child({ agent: agent.ref.name }), onStatus }).catch((error: unknown) => {
        throw withAgent(agent.ref.name, error);
      });
      started.set(agent.ref.name, servers);
    }
  } catch (error) {
    await Promise.all([...started.values()].map((servers) => servers.close()));
    throw error;
  }
  const live = new Map([...started].map(([name, servers]) => [name, liveTools(servers, logger)]));
  const changed: (() => void)[] = [];
  // After liveTools' own listener: the registry is rebuilt first, so a listener reads the new list.
  for (const servers of started.values()) servers.onChange(() => changed.forEach((listener) => listener()));
  return {
    onToolsChange: (listener) => void changed.push(listener),
    forAgent: (agent) => live.get(agent) ?? [],
    reportTo(next) {
      sink = next;
      statuses.forEach((status) => next(status));
    },
    close: async () => {
      await Promise.all([...started.values()].map((servers) => servers.close()));
    },
  };
}

/**
 * The servers' tools as one registry, built again when a server's list changes (`list_changed`, a
 * restart). A list the registry refuses (two tools of one name) keeps the last good registry, logged.
 */
function liveTools(servers: McpServers, logger: Logger): LiveTools[] {
  let current = ToolRegistry.from(servers.tools());
  servers.onChange((tools) => {
    try {
      current = ToolRegistry.from(tools);
    } catch (error) {
      logger.warn({ err: error }, 'an MCP server listed tools the registry refused; keeping the previous list');
    }
  });
  return [{ current: () => current }];
}

/** An error of an agent's server start, with the agent named first. */
function withAgent(agent: string, error: unknown): unknown {
  if (error instanceof ConfigInvalidError) return new ConfigInvalidError(`agent "${agent}": ${error.message}`, { details: Object.assign({}, error.details, { agent }), cause: error });
  if (error instanceof LoopfleetError) {
    error.message = `agent "${agent}": ${error.message}`;
    return error;
  }
  return error;
}
