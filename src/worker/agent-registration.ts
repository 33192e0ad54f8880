import type { Logger } from 'pino';
import type { AgentRegistration, AgentRegistry } from '../core/ports/agent-registry.js';
import type { AgentCatalog } from './agent-catalog.js';

/** How often a worker marks itself seen in the registry, by default: a minute. */
export const DEFAULT_REGISTRY_TOUCH_MS = 60_000;

export interface AgentRegistrationOptions {
  registry: AgentRegistry;
  workerId: string;
  agents: readonly AgentRegistration[];
  logger: Logger;
  /** Milliseconds between touches. Default {@link DEFAULT_REGISTRY_TOUCH_MS}. */
  everyMs?: number;
}

/** A worker's place in the registry, held until `close()`. */
export interface HeldRegistration {
  /**
   * Registers these agents instead (an MCP server's tool list changed), after any registration in
   * flight; ignored once closing. A failure is logged: the next touch keeps the rows alive.
   */
  update(agents: readonly AgentRegistration[]): Promise<void>;
  /** Stops touching and removes the worker's rows (a failure is logged, not thrown). Idempotent. */
  close(): Promise<void>;
}

/**
 * Registers the worker's agents (docs/store.md, "The agent registry") and keeps them fresh: the
 * registration is awaited, so a failure fails the worker's start before it takes any job; then a touch
 * every `everyMs`, which registers again when the rows are gone (pruned while the process was paused).
 * A failed touch is logged and the next one tried.
 */
export async function startAgentRegistration(options: AgentRegistrationOptions): Promise<HeldRegistration> {
  const { registry, workerId, logger } = options;
  let agents = options.agents;
  await registry.registerAgents(workerId, agents);
  let closed = false;
  let touching: Promise<void> | null = null;
  const touch = async (): Promise<void> => {
    try {
      if ((await registry.touchWorker(workerId)) || closed) return;
      await registry.registerAgents(workerId, agents);
      logger.warn({ workerId }, 'the agent registry had no rows of this worker; registered again');
    } catch (error) {
      logger.warn({ err: error, workerId }, 'agent registry touch failed; trying again at the next one');
    }
  };
  const timer = setInterval(() => {
    touching ??= touch().finally(() => (touching = null));
  }, options.everyMs ?? DEFAULT_REGISTRY_TOUCH_MS);
  timer.unref();
  let closing: Promise<void> | null = null;
  let updating: Promise<void> = Promise.resolve();
  return {
    update: (next) => {
      agents = next;
      updating = updating
        .then(async () => {
          if (!closed) await registry.registerAgents(workerId, agents);
        })
        .catch((error: unknown) => logger.warn({ err: error, workerId }, 'agent registry update failed; the listed tools may be out of date until the next one'));
      return updating;
    },
    close: () => {
      closed = true;
      clearInterval(timer);
      // After a touch in flight: its registration again must not outlive the unregister.
      closing ??= Promise.all([touching, updating])
        .then(() => registry.unregisterWorker(workerId))
        .catch((error: unknown) => logger.warn({ err: error, workerId }, 'leaving the agent registry failed; the sweeper prunes the rows in a day'));
      return closing;
    },
  };
}

/** The registrations of every agent the worker serves. */
export function agentRegistrations(agents: AgentCatalog): AgentRegistration[] {
  return agents.list().map((agent) => ({ name: agent.ref.name, version: agent.ref.version, provider: agent.provider, model: agent.model, tools: agent.tools().names() }));
}
