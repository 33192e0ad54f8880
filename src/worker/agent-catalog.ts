import type { ResolvedAgent } from '../agents/index.js';
import type { AgentProfile } from '../core/agent-profile.js';
import { DEFAULT_SESSION_AGENT } from '../fleet/agent-name.js';
import { MCP_NAME_SEPARATOR } from '../mcp/index.js';
import { ConfigInvalidError } from '../core/errors/index.js';
import type { Llm } from '../core/ports/llm.js';
import type { RetryPolicy } from '../core/retry/index.js';
import type { AgentRef } from '../core/session-types.js';
import { REQUEST_USER_INPUT, SCHEDULE_WAKEUP, spawnAgentTool, ToolRegistry, type AnyToolDefinition } from '../core/tools/index.js';

/** The tools every agent that lists none gets (`schedule_wakeup` only where the worker loaded it). */
const BUILT_IN_TOOLS: readonly string[] = ['current_time', REQUEST_USER_INPUT, SCHEDULE_WAKEUP];

/** A source of tools whose list may change while the worker runs: an MCP server. */
export interface LiveTools {
  /** The tools it offers now: the same registry object until its list changes. */
  current(): ToolRegistry;
}

/** One agent as a worker serves it: built once at start-up, shared by every run of its sessions. */
export interface ServedAgent {
  readonly ref: AgentRef;
  readonly provider: string;
  readonly model: string;
  readonly llm: Llm;
  readonly profile: AgentProfile;
  readonly retryPolicy: RetryPolicy;
  /** The tools a run of this agent may call, as they are now (an MCP server's list may change). */
  tools(): ToolRegistry;
}

/** What the catalog builds each agent from. */
export interface CatalogParts {
  /** The built-ins and the `LOOPFLEET_TOOLS` tools the worker loaded. */
  loaded: ToolRegistry;
  /** The agent's model. */
  llm: (agent: ResolvedAgent) => Llm;
  /**
   * The agent's MCP servers' tools, asked at each read (the servers may start after the catalog is
   * built, which checks everything else first); none by default.
   */
  mcp?: (agent: ResolvedAgent) => readonly LiveTools[];
}

/**
 * The agents one worker serves, by name (docs/agents.md). A session stored under `default` — it named
 * no agent — runs on the agent named `default`, or on the first agent when none has that name.
 */
export class AgentCatalog {
  readonly #agents: ReadonlyMap<string, ServedAgent>;
  readonly #fallback: ServedAgent;

  private constructor(agents: ServedAgent[]) {
    this.#agents = new Map(agents.map((agent) => [agent.ref.name, agent]));
    this.#fallback = this.#agents.get(DEFAULT_SESSION_AGENT) ?? agents[0]!;
  }

  /**
   * Builds every agent: its model, and its tools checked against what the worker loaded. Throws
   * `config.invalid` naming the agent for a tool name that is neither built in nor loaded.
   */
  static build(resolved: readonly ResolvedAgent[], parts: CatalogParts): AgentCatalog {
    if (resolved.length === 0) throw new ConfigInvalidError('a worker must serve at least one agent');
    return new AgentCatalog(resolved.map((agent) => servedAgent(agent, parts)));
  }

  /** The agent a session stored under `name` runs on; undefined when this worker does not serve it. */
  forSession(name: string): ServedAgent | undefined {
    return name === DEFAULT_SESSION_AGENT ? this.#fallback : this.#agents.get(name);
  }

  /** Every agent, in definition order. */
  list(): ServedAgent[] {
    return [...this.#agents.values()];
  }

  /** Whether any agent has a tool of that name (bounds the metrics' `tool` label). */
  hasTool(name: string): boolean {
    return this.list().some((agent) => agent.tools().has(name));
  }
}

function servedAgent(agent: ResolvedAgent, parts: CatalogParts): ServedAgent {
  const listed = ownTools(agent, parts.loaded);
  // An agent with subagents is offered `spawn_agent`, naming exactly those (docs/child-sessions.md).
  const own = agent.profile.subagents.length === 0 ? listed : listed.with(ToolRegistry.from([spawnAgentTool(agent.profile.subagents) as AnyToolDefinition]));
  checkMcpPrefixes(agent, own);
  const llm = parts.llm(agent);
  const live = parts.mcp;
  return {
    ref: agent.ref,
    provider: agent.llm.provider,
    model: agent.llm.model,
    llm,
    profile: agent.profile,
    retryPolicy: agent.retry,
    tools: live === undefined || agent.mcpServers.length === 0 ? () => own : mergedTools(own, () => live(agent)),
  };
}

/**
 * The agent's own tools followed by its live sources' current ones, merged again only when a source
 * hands out a new registry (its list changed): a run start and a metric read cost a few comparisons.
 */
function mergedTools(own: ToolRegistry, live: () => readonly LiveTools[]): () => ToolRegistry {
  let seen: ToolRegistry[] = [];
  let merged = own;
  return () => {
    const current = live().map((source) => source.current());
    if (current.length !== seen.length || current.some((registry, index) => registry !== seen[index])) {
      merged = current.reduce((tools, registry) => tools.with(registry), own);
      seen = current;
    }
    return merged;
  };
}

/**
 * An MCP server's tools are named `<server>__<tool>`: a tool of the agent's own with such a name could
 * later clash with one the server lists, so it is refused at start-up.
 */
function checkMcpPrefixes(agent: ResolvedAgent, own: ToolRegistry): void {
  for (const server of agent.mcpServers) {
    const clash = own.names().find((name) => name.startsWith(`${server.name}${MCP_NAME_SEPARATOR}`));
    if (clash !== undefined) {
      throw new ConfigInvalidError(`agent "${agent.ref.name}": tools: "${clash}" looks like a tool of MCP server "${server.name}"; rename one of them`, {
        details: { agent: agent.ref.name, tools: [clash] },
      });
    }
  }
}

/** The loaded tools the agent lists; the built-ins when it lists none. */
function ownTools(agent: ResolvedAgent, loaded: ToolRegistry): ToolRegistry {
  if (agent.toolNames === null) return loaded.subset(BUILT_IN_TOOLS);
  const unknown = loaded.unknownNames(agent.toolNames);
  if (unknown.length > 0) {
    const hint = unknown.includes(SCHEDULE_WAKEUP) ? ` (${SCHEDULE_WAKEUP} needs LOOPFLEET_AGENT_TIMERS=true)` : '';
    throw new ConfigInvalidError(`agent "${agent.ref.name}": tools: unknown tool(s) ${unknown.join(', ')}${hint}; known: ${loaded.names().join(', ')}`, {
      details: { agent: agent.ref.name, tools: unknown },
    });
  }
  return loaded.subset(agent.toolNames);
}
