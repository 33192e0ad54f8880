import { CancelledError, LeaseLostError, SessionNotFoundError, SessionQueueMismatchError } from '../core/errors/index.js';
import type { ClaimedInput } from '../core/ports/session-store.js';
import { kickSession } from '../fleet/kick.js';
import { DEFAULT_TENANT } from '../fleet/tenant-name.js';
import { failUnservedAgent, giveUpInput, UNSERVED_AGENT } from './give-up-input.js';
import { keepLease } from './lease-keeper.js';
import { linkedSignal } from '../core/linked-signal.js';
import { republishLostFinishes } from './lost-finish-events.js';
import { redeliverToParent } from './child-sessions.js';
import { runClaimedInput } from './run-claimed-input.js';
import { takeLeaseOrPark, wakeOneParked } from './tenant-cap.js';
import { boundWhileStopping, StoppingWaitCutShortError } from './stopping-wait.js';
import type { WorkerContext } from './worker-context.js';

export type DrainOutcome =
  /** The inbox is empty: done. */
  | { kind: 'drained'; processed: number }
  /** The slice is used up and more is pending: re-kicked so other sessions get a turn (fairness). */
  | { kind: 'yielded'; processed: number }
  /** Another live worker holds the lease: check again at `retryAt` — never complete as a no-op (R7). */
  | { kind: 'busy'; retryAt: number; holder: string | null }
  /** The lease was lost mid-drain: the new holder drains; nothing more to do here. */
  | { kind: 'lease_lost'; processed: number }
  /** Shutdown stopped the drain (after its input in hand, or aborting it): re-kicked so another worker continues. */
  | { kind: 'handed_back'; processed: number }
  /** The session no longer exists. */
  | { kind: 'no_session' }
  /**
   * Its tenant runs as many inputs as its cap allows: the session is parked, and a release of the
   * tenant's (or the sweeper) kicks it again (docs/tenant-limits.md).
   */
  | { kind: 'parked'; tenant: string };

/**
 * The drain of one session (docs/fleet.md): take the lease (fencing token, database time) together
 * with the first input, keep it alive, run pending inputs in seq order, yield after a bounded slice,
 * release. Every write the runs make is fenced by the token, so a redelivered job or a zombie cannot
 * duplicate anything. An input's terminal commit says whether others wait, so a session without
 * followers is released without another claim.
 */
export async function drainSession(ctx: WorkerContext, sessionId: string, jobSignal: AbortSignal | undefined, tenant?: string): Promise<DrainOutcome> {
  const kick = sessionKicker(ctx, sessionId, tenant);
  const { store, settings } = ctx;
  // Shutdown began before this drain took the lease: taking it would claim (and count an attempt of)
  // an input this worker should not start. Hand the session to a worker that stays.
  if (ctx.stopping.aborted) return stopped(ctx, kick, ctx.stopping, 0);
  let attempt;
  try {
    attempt = await takeLeaseOrPark(ctx, sessionId);
  } catch (error) {
    if (error instanceof SessionNotFoundError) return { kind: 'no_session' };
    // Another queue's session: there is none of that id on this queue. Its own queue's workers run it.
    if (error instanceof SessionQueueMismatchError) {
      ctx.logger.warn({ sessionId, queue: ctx.queueName, sessionQueue: error.details?.sessionQueue }, "drain of another queue's session refused; left to its own queue");
      return { kind: 'no_session' };
    }
    throw error;
  }
  // The lease runs a TTL from no earlier than `asked`: the keeper counts a lapse from there.
  const { lease, asked } = attempt;
  if (!lease.acquired) {
    if (lease.atCap !== undefined) return { kind: 'parked', tenant: lease.atCap.tenant };
    return { kind: 'busy', retryAt: ctx.clock.now() + Math.min(5_000, Math.max(100, lease.retryAfterMs + 50)), holder: lease.holder };
  }
  const log = ctx.logger.child({ sessionId, leaseToken: lease.token });
  const keeper = keepLease(store, sessionId, lease.token, settings.leaseTtlMs, (error) => log.warn({ err: error }, 'lease renewal failed'), { since: asked });
  const linked = linkedSignal([keeper.signal, ctx.shutdown, ...(jobSignal === undefined ? [] : [jobSignal])]);
  const stop = linked.signal;
  const finishes: Finishes = { owed: lease.finishesOwed };
  try {
    const outcome = await drainWithLease(ctx, kick, lease.token, lease.claimed, stop, finishes);
    if (outcome.kind === 'lease_lost') log.warn({ processed: outcome.processed }, 'lease lost: another worker took the session over; stopped without writing');
    if (outcome.kind === 'handed_back') log.info({ processed: outcome.processed }, 'drain stopped early; session handed back to the fleet');
    return outcome;
  } finally {
    keeper.stop();
    linked.dispose();
    // Only a drain that published every finish it owed lets the next one skip the check.
    await store.releaseLease({ sessionId, token: lease.token, finishesPublished: !finishes.owed }).catch((error: unknown) => log.warn({ err: error }, 'lease release failed'));
    // The slot this drain held is free: hand it to a parked session of the tenant.
    if (lease.cappedTenant !== undefined) await wakeOneParked(ctx, lease.cappedTenant);
  }
}

/**
 * Whether an `input_finished` of the session may be unpublished (I6): as the lease said at the start
 * (`finishes_owed`), cleared by a completed check, set while an input runs until its event is out.
 */
interface Finishes {
  owed: boolean;
}

/**
 * `firstClaim` is the input claimed with the lease (`undefined`: none was, though one may be open).
 * After each input, `next` is what the drain knows of the following one: `undefined` claim it, `null`
 * none was pending at the terminal commit. Every claim made here is under the drain's release path.
 */
async function drainWithLease(
  ctx: WorkerContext,
  kick: SessionKicker,
  token: number,
  firstClaim: ClaimedInput | null | undefined,
  stop: AbortSignal,
  finishes: Finishes,
): Promise<DrainOutcome> {
  const { sessionId } = kick;
  const started = ctx.clock.now();
  let processed = 0;
  let first = true;
  let next: ClaimedInput | null | undefined = firstClaim;
  for (;;) {
    if (stop.aborted) return stopped(ctx, kick, stop, processed);
    // Shutdown began: the input in hand was finished; the rest goes to workers that stay.
    // An input the lease claimed (`next`, before the first run) is in hand too: shutdown may have begun
    // while the lease statement ran, and handing it back now would waste the attempt the claim counted.
    if (ctx.stopping.aborted && (next === undefined || next === null)) return (await hasOpenInputs(ctx, sessionId)) ? stopped(ctx, kick, ctx.stopping, processed) : { kind: 'drained', processed };
    try {
      // When the lease says a finish may be owed (a holder died, was stopped or failed to publish
      // since the last release that said all were out), publish it before running anything — also
      // before a resumed input: its holder may have died before its own repair. A repair that fails
      // throws (the job retries, the finish still owed): an input run now would end a later one, and
      // the next repair looks only at the input that ended last. The lease claimed nothing then, and
      // the claim waits for the repair: a claim counts an attempt, and failed repairs must not use
      // up those of an input that never ran.
      if (first && finishes.owed) {
        await boundWhileStopping(ctx, repairFinishEvents(ctx, sessionId, token, next), 'lost-finish check');
        finishes.owed = false;
      }
      first = false;
      const claimed = next !== undefined ? next : await ctx.store.claimNextInput({ sessionId, leaseToken: token });
      next = undefined;
      if (claimed === null) return { kind: 'drained', processed };
      // Owed from the input's terminal commit until its input_finished is out: a throw leaves it owed
      // and ends the drain, so no later input ends while this one's finish may be unpublished.
      finishes.owed = true;
      const agent = ctx.agents.forSession(claimed.session.agent);
      if (claimed.input.attempts > ctx.settings.maxInputAttempts) await giveUpInput(ctx, sessionId, token, claimed.input, agent?.ref.name ?? UNSERVED_AGENT, claimed.session);
      else if (agent === undefined) await failUnservedAgent(ctx, sessionId, token, claimed.input, claimed.session.agent, claimed.session);
      else if (!(await runClaimedInput(ctx, sessionId, token, claimed, agent, stop)).pendingInputs) next = null;
      finishes.owed = false;
    } catch (error) {
      // A fenced write refused (the heartbeat may not have noticed yet): the new holder drains, and a
      // kick from here would only wake a drain that finds the lease taken.
      if (error instanceof LeaseLostError) return { kind: 'lease_lost', processed };
      if (error instanceof CancelledError && stop.aborted) return stopped(ctx, kick, stop, processed);
      // Redis did not answer while the worker stops: hand back and release (the finish stays owed).
      if (error instanceof StoppingWaitCutShortError) return stopped(ctx, kick, ctx.stopping, processed);
      throw error;
    }
    processed += 1;
    const sliceUsed = processed >= ctx.settings.sliceInputs || ctx.clock.now() - started >= ctx.settings.sliceMs;
    if (sliceUsed && next !== null && (await hasOpenInputs(ctx, sessionId))) {
      // Cut short while stopping, it is lost like a failed hand-back kick: the sweeper re-kicks.
      await boundWhileStopping(ctx, kick.kick(), 'yield kick').catch((error: unknown) => {
        if (!(error instanceof StoppingWaitCutShortError)) throw error;
        ctx.logger.warn({ err: error, sessionId }, 'yield kick not confirmed before shutdown; the sweeper will repair it');
      });
      return { kind: 'yielded', processed };
    }
  }
}

async function stopped(ctx: WorkerContext, kick: SessionKicker, stop: AbortSignal, processed: number): Promise<DrainOutcome> {
  const { sessionId } = kick;
  if (stop.reason instanceof LeaseLostError) return { kind: 'lease_lost', processed };
  // Shutdown or a lost BullMQ lock: hand the session to whoever takes the next kick. Bounded while
  // stopping (Redis down must not hold the lease release); the sweeper re-kicks a kick that was lost.
  await boundWhileStopping(ctx, kick.kick(), 'hand-back kick').catch((error: unknown) => ctx.logger.warn({ err: error, sessionId }, 'hand-back kick failed; the sweeper will repair it'));
  return { kind: 'handed_back', processed };
}

/**
 * A previous holder may have committed its last input's end without publishing it (I6). Throws when
 * the check failed: the finish stays owed and nothing runs until a later attempt completes it.
 * `claimed` is what the lease claimed; when it left the claim to the drain (`undefined`), the search
 * ends below the lowest input open now — read under the lease, so no holder can end it any more.
 */
async function repairFinishEvents(ctx: WorkerContext, sessionId: string, leaseToken: number, claimed: ClaimedInput | null | undefined): Promise<void> {
  try {
    const nextSeq = claimed === undefined ? await lowestOpenSeq(ctx, sessionId) : (claimed?.input.seq ?? null);
    await republishLostFinishes(ctx, sessionId, leaseToken, nextSeq);
    await redeliverToParent(ctx, sessionId, claimed?.session, nextSeq);
  } catch (error) {
    ctx.logger.warn({ err: error, sessionId }, 'checking for lost input_finished events failed; the drain retries before running anything');
    throw error;
  }
}

async function hasOpenInputs(ctx: WorkerContext, sessionId: string): Promise<boolean> {
  return (await lowestOpenSeq(ctx, sessionId)) !== null;
}

/** The seq of the session's lowest `pending` or `running` input: the one a claim would take. */
async function lowestOpenSeq(ctx: WorkerContext, sessionId: string): Promise<number | null> {
  return (await ctx.store.listInputs(sessionId, { status: ['pending', 'running'], limit: 1 }))[0]?.seq ?? null;
}

/** The drain's own kicks (yield, hand-back): its session, and the tenant whose line they join. */
interface SessionKicker {
  sessionId: string;
  kick(): Promise<void>;
}

/**
 * A drain job added before kicks carried the tenant has none: the session row says which it is, read
 * only when such a drain kicks (yield, hand-back).
 */
function sessionKicker(ctx: WorkerContext, sessionId: string, tenant: string | undefined): SessionKicker {
  return {
    sessionId,
    kick: async () => {
      const known = tenant ?? (await ctx.store.getSession(sessionId))?.tenant ?? DEFAULT_TENANT;
      await kickSession({ queue: ctx.queue, fair: ctx.fair }, { sessionId, tenant: known });
    },
  };
}
