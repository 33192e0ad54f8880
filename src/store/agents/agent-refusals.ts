import { AgentNotFoundError, SessionAgentMismatchError, SessionQueueMismatchError, SessionTenantMismatchError } from '../../core/errors/index.js';

/** The refusal of an add or a create naming an agent no live worker registered. */
export function agentNotFound(sessionId: string, agent: string): AgentNotFoundError {
  return new AgentNotFoundError(`no worker serves agent "${agent}" (session ${sessionId}); nothing was written`, { details: { sessionId, agent } });
}

/** The refusal of an add naming another agent than its session's (`current`: null when unknown). */
export function agentMismatch(sessionId: string, agent: string, current: string | null): SessionAgentMismatchError {
  const runs = current === null ? 'another agent' : `agent "${current}"`;
  return new SessionAgentMismatchError(`session ${sessionId} runs on ${runs}, not "${agent}"; nothing was written`, {
    details: { sessionId, agent, sessionAgent: current },
  });
}

/** The refusal of an add on one queue to a session of another queue of the same database. */
export function queueMismatch(sessionId: string, queue: string, current: string | null): SessionQueueMismatchError {
  const runs = current === null ? 'another queue' : `queue "${current}"`;
  return new SessionQueueMismatchError(`session ${sessionId} runs on ${runs}, not "${queue}"; nothing was written`, {
    details: { sessionId, queue, sessionQueue: current },
  });
}

/**
 * The refusal of an add naming another tenant than its session's. The session's own tenant is not
 * told: a caller of another tenant learns nothing about it.
 */
export function tenantMismatch(sessionId: string, tenant: string): SessionTenantMismatchError {
  return new SessionTenantMismatchError(`session ${sessionId} belongs to another tenant than "${tenant}"; nothing was written`, {
    details: { sessionId, tenant },
  });
}
