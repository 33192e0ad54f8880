import type { ChildrenPort } from '../core/ports/children.js';
import type { InputResult, SessionRecord } from '../core/session-types.js';
import { childResultPayload } from '../fleet/child-result.js';
import { childSessionId } from '../fleet/child-session-id.js';
import { kickSession } from '../fleet/kick.js';
import { DEFAULT_TENANT } from '../fleet/tenant-name.js';
import { lastEndedInput } from './lost-finish-events.js';
import type { WorkerContext } from './worker-context.js';

/** The input id of a child's first input, its `task` (one per child session). */
export const SPAWN_INPUT_ID = 'spawn';

/**
 * The loop's {@link ChildrenPort} on this worker (docs/child-sessions.md): the child session and its
 * first input are written in one statement under the parent's lease, then announced on the child's
 * stream and kicked. A kick lost here is repaired by the sweeper (the input is pending); one that
 * finds the child already there is sent again, in case the first one was the lost one.
 */
export function childrenPort(ctx: WorkerContext): ChildrenPort {
  return {
    spawn: async (request) => {
      const id = childSessionId(request.parentSessionId, request.toolCallId);
      const outcome = await ctx.store.spawnChild(Object.assign({}, request, { childSessionId: id }));
      if (outcome.kind === 'created') {
        await ctx.publisher
          .publish(id, 1, { type: 'input_accepted', kind: 'send', mode: 'queue', inputId: SPAWN_INPUT_ID })
          .catch((error: unknown) => ctx.logger.warn({ err: error, sessionId: id }, 'child session created but its input_accepted event was not published'));
      }
      // A child takes its parent's tenant (docs/child-sessions.md), and the parent is this run's session.
      if (outcome.kind !== 'refused') await kick(ctx, id, request.tenant ?? DEFAULT_TENANT, 'child session created but not kicked; the sweeper will');
      return outcome;
    },
  };
}

/**
 * A child's input ended: its outcome goes to the parent's inbox (once: the store keys it on the
 * call), is announced there, and the parent is kicked. Called after the child's terminal commit and
 * before its `input_finished`, so a worker that dies in between leaves the finish owed and the next
 * drain of the child delivers again (finding it done, or doing it). Nothing for a session that is no
 * child, or an outcome that is no answer yet (a child waiting for a person). A store failure throws.
 */
export async function deliverToParent(ctx: WorkerContext, session: SessionRecord, result: InputResult, error: { code: string; message: string } | null): Promise<void> {
  if (session.parentSessionId === null || session.spawn === null) return;
  const payload = childResultPayload({ sessionId: session.id, agent: session.agent, spawn: session.spawn }, result, error);
  if (payload === null) return;
  const delivered = await ctx.store.deliverChildResult(session.id, payload);
  const parent = session.parentSessionId;
  if (delivered !== null) {
    await ctx.publisher
      .publish(parent, delivered.seq, { type: 'input_accepted', kind: 'child', mode: payload.wait ? 'queue' : 'steer', inputId: `child:${payload.toolCallId}` })
      .catch((failure: unknown) => ctx.logger.warn({ err: failure, sessionId: parent, seq: delivered.seq }, "child result delivered but its input_accepted event was not published"));
  }
  // Parent and child share a tenant.
  await kick(ctx, parent, session.tenant, 'child result delivered but the parent was not kicked; the sweeper will');
}

async function kick(ctx: WorkerContext, sessionId: string, tenant: string, message: string): Promise<void> {
  await kickSession({ queue: ctx.queue, fair: ctx.fair }, { sessionId, tenant }).catch((error: unknown) => ctx.logger.warn({ err: error, sessionId }, message));
}

/**
 * The repair of a child session's drain (when a finish may be owed): its last ended input's outcome
 * is delivered again — a worker may have died after the terminal commit, before the delivery. The
 * store keeps one delivery per call, so one already made writes nothing (the parent is kicked again).
 */
export async function redeliverToParent(ctx: WorkerContext, sessionId: string, known: SessionRecord | undefined, nextSeq: number | null): Promise<void> {
  const session = known ?? (await ctx.store.getSession(sessionId));
  if (session === null || session.parentSessionId === null) return;
  const host = await lastEndedInput(ctx, sessionId, nextSeq);
  if (host === null || host.result === null) return;
  await deliverToParent(ctx, session, host.result, host.errorCode === null ? null : { code: host.errorCode, message: host.errorMessage ?? '' });
}
