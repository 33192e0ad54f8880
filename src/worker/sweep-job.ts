import { armTimer } from '../fleet/arm-timer.js';
import { drainDedupId, JOB, timerJobId } from '../fleet/fleet-keys.js';
import { kickSession } from '../fleet/kick.js';
import { parkSession } from '../fleet/tenant-parking.js';
import { trimFairLines } from '../fleet/fair-line.js';
import { waitingDrains } from './waiting-drains.js';
import type { TimerRecord } from '../core/ports/timer-store.js';
import { STALE_WORKER_MS } from '../core/ports/agent-registry.js';
import type { WorkerContext } from './worker-context.js';

/**
 * Job states in which a drain job will still run: its deduplication key is legitimate. Not `active`:
 * the sweeper only looks at sessions with no live lease, and an active drain that does not hold its
 * session's lease is not draining it — its worker died or froze, and BullMQ would keep the job active
 * (swallowing every kick, `keepLastIfActive` included) until its lock lapses and a stalled check runs,
 * up to twice `WORKER_JOB_LOCK_MS` (20 s by default). A live drain caught between taking the job and the
 * lease, or between releasing the lease and finishing the job, is harmless to duplicate: the lease
 * serialises the two.
 */
const LIVE_STATES = new Set(['waiting', 'delayed', 'prioritized', 'waiting-children']);

export interface SweepReport {
  /** Sessions found with open inputs and no live lease. */
  stranded: number;
  /** Kicks sent for them: those whose drain was not waiting (prioritized or delayed) already. */
  kicked: number;
  /** Of them, sessions of a tenant at its cap on inputs running at once, parked instead of kicked. */
  parked?: number;
  /**
   * Deduplication keys that pointed at a missing or finished job (R9), or at a drain still active on a
   * worker that lost the session's lease (a dead or frozen worker, R2), and were removed.
   */
  strayKeysRemoved: number;
  /** Armed timers overdue past the grace whose alarm job was missing, failed or finished, and was set again. */
  timersRearmed: number;
  /** Members of the tenants' fair-dispatch lines with no drain job (a lost ZREM), removed. */
  lineMembersTrimmed?: number;
}

/**
 * Line members younger than this are never trimmed: a kick joins the line before it adds its job, so
 * a member may briefly have no job yet.
 */
const LINE_TRIM_AGE_MS = 10_000;

/**
 * The sweeper (I1; R3, R4, R9 in docs/invariants.md): wakes every session that has open inputs and no live
 * lease — a lost kick, a Redis restart or flush, a failed drain job, a dead worker — and removes
 * deduplication keys that would otherwise swallow every future kick. Last, it deletes the agent
 * registry rows of workers not seen for `STALE_WORKER_MS`.
 */
export async function sweep(ctx: WorkerContext, limit = 500): Promise<SweepReport> {
  const sessions = await ctx.upkeep.findStrandedSessions({ graceMs: ctx.settings.sweepGraceMs, limit, queue: ctx.queueName });
  const report: SweepReport = { stranded: sessions.length, kicked: 0, parked: 0, strayKeysRemoved: 0, timersRearmed: 0 };
  const waiting = await waitingDrains(ctx.redis, ctx.queue, sessions.map((session) => session.sessionId));
  for (const { sessionId, tenant, parkFor } of sessions) {
    // Its drain waits in the queue: nothing to repair, and a kick would be absorbed.
    if (waiting.has(sessionId)) continue;
    if (await removeStrayDedupKey(ctx, sessionId)) report.strayKeysRemoved += 1;
    // Its tenant is at its cap: kicked, it would only find that out. Parked, the tenant's next
    // release wakes it (docs/tenant-limits.md).
    if (parkFor !== null) {
      await parkSession(ctx.redis, ctx.queueName, parkFor, sessionId, ctx.clock.now());
      report.parked = (report.parked ?? 0) + 1;
      continue;
    }
    await kickSession({ queue: ctx.queue, fair: ctx.fair }, { sessionId, tenant });
    report.kicked += 1;
  }
  // After the kicks: a member whose ZREM was lost no longer pushes its tenant's drains back.
  let trimmed = 0;
  for (const queue of ctx.queue.queues) {
    trimmed += await trimFairLines(ctx.redis, ctx.queue.keyRoot(queue), queue.qualifiedName, Math.max(LINE_TRIM_AGE_MS, ctx.settings.sweepGraceMs));
  }
  report.lineMembersTrimmed = trimmed;
  for (const timer of await ctx.timers.findOverdueTimers({ graceMs: ctx.settings.sweepGraceMs, limit, queue: ctx.queueName })) {
    if (await rearmTimer(ctx, timer)) report.timersRearmed += 1;
  }
  if (report.stranded > 0 || report.timersRearmed > 0) ctx.logger.info({ ...report }, 'sweeper repaired stranded sessions and timers');
  // Budget reservations of holders that died or were replaced (docs/budgets.md): given back so the
  // room they held returns; a replaced holder that settles later is still charged.
  const released = await ctx.budgets.releaseStale(limit);
  if (released > 0) ctx.logger.info({ released }, 'sweeper gave back budget reservations of holders that are gone');
  // Workers killed without leaving the registry: their agents stop counting as served a day after
  // their last touch; their rows go here.
  const pruned = await ctx.registry.pruneWorkers(STALE_WORKER_MS);
  if (pruned > 0) ctx.logger.info({ workers: pruned }, 'sweeper pruned the agent registry rows of workers not seen for a day');
  ctx.metrics.swept(report);
  return report;
}

async function removeStrayDedupKey(ctx: WorkerContext, sessionId: string): Promise<boolean> {
  const dedupId = drainDedupId(sessionId);
  const queue = ctx.queue.for(sessionId);
  const jobId = await queue.getDeduplicationJobId(dedupId);
  if (jobId === null) return false;
  const job = await queue.getJob(jobId);
  const state = job === undefined ? 'missing' : await job.getState();
  if (LIVE_STATES.has(state)) return false;
  // Started less than a lease ago: it may be about to take the lease. A dead holder's job started at
  // least a lease TTL before its lease lapsed.
  if (state === 'active' && ctx.clock.now() - (job?.processedOn ?? 0) < ctx.settings.leaseTtlMs) return false;
  await queue.removeDeduplicationKey(dedupId);
  ctx.logger.warn({ sessionId, jobId, state }, 'removed a stray deduplication key');
  return true;
}

/**
 * Sets the alarm of an armed timer that is overdue again, unless its job is still to run: a job lost
 * with Redis, or failed past its attempts (Postgres down through all of them), or finished without
 * recording the firing (a crash between the accept and the record). A finished or failed job is
 * removed first, since it holds the alarm's id.
 */
async function rearmTimer(ctx: WorkerContext, timer: TimerRecord): Promise<boolean> {
  const job = await ctx.queue.for(timer.sessionId).getJob(timerJobId(timer.sessionId, timer.timerId, timer.fireCount));
  const state = job === undefined ? 'missing' : await job.getState();
  if (LIVE_STATES.has(state) || state === 'active') return false;
  if (job !== undefined && state !== 'unknown') await job.remove();
  await armTimer(ctx.queue, timer, ctx.clock.now());
  ctx.logger.warn({ sessionId: timer.sessionId, timerId: timer.timerId, fireCount: timer.fireCount, state }, 'timer overdue and its alarm not pending; set it again');
  return true;
}

/** Registers the sweeper as a BullMQ job scheduler (idempotent: every worker may call it). */
export async function scheduleSweeper(ctx: WorkerContext): Promise<void> {
  await ctx.queue.home.upsertJobScheduler(JOB.sweep, { every: ctx.settings.sweepEveryMs }, { name: JOB.sweep, data: {}, opts: { removeOnComplete: true, removeOnFail: 100 } });
}

/**
 * Whether the schedule's next iteration is lost. BullMQ sets the next iteration of a schedule from the
 * worker that takes the current one, in a call after taking it: a worker that dies or loses Redis
 * between the two (kill -9, a silent Redis at shutdown) leaves the schedule pointing at a job that will
 * never set another — no sweep until BullMQ's stalled check re-runs that job, up to twice
 * `WORKER_JOB_LOCK_MS` (20 s by default). Lost when the iteration is overdue by two periods (at least 5 s) and is not
 * waiting to run (a busy queue may hold it back; a waiting job still sets the next one when taken).
 */
async function sweepIterationLost(ctx: WorkerContext, next: number | undefined): Promise<boolean> {
  if (next === undefined) return false;
  if (ctx.clock.now() - next < Math.max(5_000, 2 * ctx.settings.sweepEveryMs)) return false;
  const job = await ctx.queue.home.getJob(`repeat:${JOB.sweep}:${next}`);
  const state = job === undefined ? 'missing' : await job.getState();
  return !LIVE_STATES.has(state);
}

/**
 * Registers the sweeper again whenever Redis lost it — a flush, or a restart without persistence (R4).
 * The schedule lives in Redis, so the loss that strands inboxes would otherwise also stop the only
 * thing that repairs them (I1). Checks every `sweepEveryMs`, but not more often than once a second; returns the stop
 * function.
 */
export function keepSweeperScheduled(ctx: WorkerContext): () => void {
  let checking = false;
  const check = async () => {
    const scheduler = await ctx.queue.home.getJobScheduler(JOB.sweep);
    if (scheduler === undefined) {
      await scheduleSweeper(ctx);
      ctx.logger.warn('the sweeper schedule was missing from Redis; registered it again');
      return;
    }
    if (!(await sweepIterationLost(ctx, scheduler.next))) return;
    // Removing the schedule leaves a job already running alone; adding it again sets a next iteration.
    await ctx.queue.home.removeJobScheduler(JOB.sweep);
    await scheduleSweeper(ctx);
    ctx.logger.warn({ next: scheduler.next }, 'the sweeper schedule had no next iteration (its worker died while taking one); registered it again');
  };
  const timer = setInterval(() => {
    if (checking) return;
    checking = true;
    check()
      .catch((error: unknown) => ctx.logger.warn({ err: error }, 'sweeper schedule check failed'))
      .finally(() => {
        checking = false;
      });
  }, Math.max(1_000, ctx.settings.sweepEveryMs));
  timer.unref();
  return () => clearInterval(timer);
}
