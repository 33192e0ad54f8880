import type { QueueShards } from './queue-shards.js';
import type { Logger } from 'pino';
import { parseInputPayload } from '../core/input-payload.js';
import type { ClientStore } from '../core/ports/client-store.js';
import type { AcceptedInput } from '../core/ports/session-store.js';
import type { TraceContext } from '../core/ports/tracing.js';
import type { InputKind, InputMode } from '../core/session-types.js';
import type { FleetEvent } from './fleet-events.js';
import type { TenantAdmission } from './tenant-admission.js';
import { kickSession, type FairDispatch } from './kick.js';
import { settleWithin } from './settle-within.js';

/** One input to accept: its session, kind, payload (validated for the kind) and optional mode and ids. */
export interface AcceptRequest {
  sessionId: string;
  kind: InputKind;
  mode?: InputMode;
  payload: Record<string, unknown>;
  inputId?: string;
  originJobId?: string;
  /** The producer's span the input's span continues (docs/tracing.md); absent or null: none. */
  traceContext?: TraceContext | null;
  /** The agent the input is for (checked by the store: `agent.not_found`, `session.agent_mismatch`). */
  agent?: string;
  /** The tenant the input is for (checked by the store: `session.tenant_mismatch`). */
  tenant?: string;
}

/** What accepting needs: the store (durability), the queue (the kick), and optionally the event publisher. */
export interface AcceptDeps {
  store: Pick<ClientStore, 'acceptInput'>;
  queue: QueueShards;
  /** Fair dispatch between tenants (docs/fair-dispatch.md); absent or null: drains go FIFO. */
  fair?: FairDispatch | null;
  maxInputBytes: number;
  publish?: (sessionId: string, inputSeq: number | null, event: FleetEvent) => Promise<unknown>;
  logger?: Logger;
  /**
   * Longest wait, in milliseconds, for the after-commit Redis work (event + kick) before returning
   * anyway; the work goes on in the background. Default: wait until it settles. A client sets it
   * because a reconnecting Redis client queues commands instead of failing them.
   */
  kickTimeoutMs?: number;
  /**
   * The tenants' admission rates (docs/tenant-limits.md), checked before the accept writes anything:
   * `tenant.rate_limited` when the input's tenant admits no more this second. Absent: none checked
   * (timer firings and child results are not admissions).
   */
  admission?: Pick<TenantAdmission, 'admit'>;
}

/**
 * The one way an input enters a session, from the client library and from the raw path alike
 * (docs/fleet.md): validate the payload for its kind, make the input durable in Postgres, then —
 * after commit — publish `input_accepted` and kick the drain. If Redis is down the input is still
 * accepted (I1): the sweeper kicks it later.
 */
export async function acceptAndKick(deps: AcceptDeps, request: AcceptRequest): Promise<AcceptedInput> {
  return (await acceptAndReport(deps, request)).accepted;
}

/** What {@link acceptAndReport} did: the stored input, and whether its drain's wake-up job was queued. */
export interface AcceptReport {
  accepted: AcceptedInput;
  /**
   * False when the input is stored but the wake-up (the drain kick) failed or did not finish within
   * `kickTimeoutMs`: Redis is down or slow. The sweeper runs the input once Redis answers.
   */
  wakeQueued: boolean;
}

/** {@link acceptAndKick}, also telling whether the wake-up was queued. */
export async function acceptAndReport(deps: AcceptDeps, request: AcceptRequest): Promise<AcceptReport> {
  parseInputPayload(request.kind, request.payload);
  await deps.admission?.admit(request.sessionId, request.tenant);
  const accepted = await deps.store.acceptInput({
    sessionId: request.sessionId,
    kind: request.kind,
    payload: request.payload,
    maxBytes: deps.maxInputBytes,
    // The queue it is added on: a session of another queue on this database refuses it.
    queue: deps.queue.name,
    ...(request.mode !== undefined ? { mode: request.mode } : {}),
    ...(request.inputId !== undefined ? { inputId: request.inputId } : {}),
    ...(request.originJobId !== undefined ? { originJobId: request.originJobId } : {}),
    ...(request.traceContext != null ? { traceContext: request.traceContext } : {}),
    ...(request.agent !== undefined ? { agent: request.agent } : {}),
    ...(request.tenant !== undefined ? { tenant: request.tenant } : {}),
  });
  let wakeQueued = false;
  const notified = notifyAccepted(deps, request, accepted).then((kicked) => {
    wakeQueued = kicked;
  });
  if (deps.kickTimeoutMs === undefined) {
    await notified;
  } else if (!(await settleWithin(notified, deps.kickTimeoutMs))) {
    deps.logger?.warn({ sessionId: accepted.sessionId, seq: accepted.seq }, 'input accepted; its kick is still pending (Redis slow or down), the sweeper covers it');
    return { accepted, wakeQueued: false };
  }
  return { accepted, wakeQueued };
}

/**
 * Publishes `input_accepted`, then kicks the drain; never rejects: resolves true when the kick was queued. The two are independent: a lost
 * event only leaves a hole subscribers see as a gap, a lost kick is repaired by the sweeper.
 */
async function notifyAccepted(deps: AcceptDeps, request: AcceptRequest, accepted: AcceptedInput): Promise<boolean> {
  const where = { sessionId: accepted.sessionId, seq: accepted.seq };
  if (!accepted.duplicate && deps.publish !== undefined) {
    try {
      await deps.publish(accepted.sessionId, accepted.seq, {
        type: 'input_accepted',
        kind: request.kind,
        mode: request.mode ?? 'queue',
        inputId: accepted.inputId,
      });
    } catch (error) {
      deps.logger?.warn({ err: error, ...where }, 'input accepted but its input_accepted event was not published');
    }
  }
  try {
    // A duplicate is kicked too: the first attempt's kick may be the one that was lost (R6).
    await kickSession({ queue: deps.queue, fair: deps.fair ?? null }, { sessionId: accepted.sessionId, tenant: accepted.tenant });
    return true;
  } catch (error) {
    deps.logger?.warn({ err: error, ...where }, 'input accepted but not kicked; the sweeper will');
    return false;
  }
}
