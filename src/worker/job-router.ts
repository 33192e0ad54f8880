import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { InputInvalidError, isLoopfleetError, JobInvalidIdError, JobUnknownError, TenantRateLimitedError, type LoopfleetError } from '../core/errors/index.js';
import { assertSessionId } from '../fleet/session-id.js';
import { JOB } from '../fleet/fleet-keys.js';
import { leaveFairLine } from '../fleet/fair-line.js';
import { TENANT_RULE } from '../fleet/tenant-name.js';
import { drainSession } from './drain-session.js';
import { ingestJob, type IngestResult } from './ingest-job.js';
import { UnreadableJobData } from './queue-worker.js';
import { RawIngestOrder, rawSessionId } from './raw-ingest-order.js';
import { sweep } from './sweep-job.js';
import { fireTimerJob } from './timer-job.js';
import { reidentifyJob } from './unreadable-job-id.js';
import type { WorkerContext } from './worker-context.js';

/**
 * The processor of every job on the queue, and the ONE place where outcomes become BullMQ's
 * own: success is the return value; "another worker holds the lease" is a delay
 * (`moveToDelayed` + `DelayedError`, never a silent completion); bad input or configuration is an
 * `UnrecoverableError` carrying the typed code (no retry, the queue keeps flowing); a raw input whose
 * ingest failed for another reason is delayed and tried again (its producer may have left BullMQ's
 * one attempt); anything else is thrown for BullMQ to retry with backoff.
 */
export function createJobProcessor(ctx: WorkerContext) {
  const order = new RawIngestOrder(ctx.redis, ctx.queueName);
  return async (job: Job, token?: string, signal?: AbortSignal): Promise<unknown> => {
    // A name the worker does not handle is counted as `other`: job names come from producers.
    const kind = HANDLED_JOBS.includes(job.name) ? job.name : 'other';
    try {
      const result = await route(ctx, order, job, token, signal);
      ctx.metrics.jobDone(kind, 'ok');
      return result;
    } catch (error) {
      if (error instanceof DelayedError) {
        if (!(error instanceof RetryLaterError)) ctx.metrics.jobDone(kind, 'delayed');
        throw error;
      }
      if (isRejection(error)) {
        ctx.metrics.jobDone(kind, 'rejected');
        ctx.logger.warn({ jobId: job.id, jobName: job.name, code: error.code, err: error }, 'job rejected');
        throw new UnrecoverableError(`${error.code}: ${error.message}`);
      }
      ctx.metrics.jobDone(kind, 'error');
      throw error;
    }
  };
}

/** A raw job moved to delayed after a failed ingest: BullMQ's `DelayedError`, already counted as a retry. */
class RetryLaterError extends DelayedError {}

/** The job names {@link route} handles. */
const HANDLED_JOBS: readonly string[] = [JOB.drain, JOB.send, JOB.resume, JOB.timer, JOB.sweep];

/** Starts of a raw `send`/`resume` job whose ingest keeps failing (not for its data) before it fails for good. */
export const RAW_INGEST_MAX_STARTS = 20;

/** The wait before start `started + 1` of such a job: 1 s, doubling, at most a minute (≈ 15 min over all starts). */
export function rawIngestDelayMs(started: number): number {
  return Math.min(60_000, 1_000 * 2 ** Math.max(0, started - 1));
}

/**
 * The delay of a raw job over its tenant's admission rate: the bucket's wait, spread by up to as much
 * again (at least a second) so a flood of delayed jobs does not come back at one instant, where one
 * would be admitted and the rest delayed again.
 */
export function rateLimitedDelayMs(error: TenantRateLimitedError, random: () => number = Math.random): number {
  const wait = typeof error.details.retryAfterMs === 'number' && error.details.retryAfterMs > 0 ? error.details.retryAfterMs : 1_000;
  return Math.ceil(wait + random() * Math.max(wait, 1_000));
}

/** Bad input or configuration: failing the job at once is the answer, retrying would fail the same way. */
function isRejection(error: unknown): error is LoopfleetError {
  return isLoopfleetError(error) && !error.retryable && (error.fault === 'input' || error.fault === 'config');
}

async function route(ctx: WorkerContext, order: RawIngestOrder, job: Job, token: string | undefined, signal: AbortSignal | undefined): Promise<unknown> {
  // Whatever its name: a job under an id that is not UTF-8, or with data that cannot be read, is
  // failed once before anything is written (S5).
  await refuseUnreadableId(ctx, job, token);
  if (job.data instanceof UnreadableJobData) throw new InputInvalidError(`job data is not JSON (${job.data.length} characters)`);
  switch (job.name) {
    case JOB.drain: {
      const data = job.data as { sessionId?: unknown; tenant?: unknown } | null;
      const sessionId = assertSessionId(data?.sessionId);
      const tenant = typeof data?.tenant === 'string' && TENANT_RULE.test(data.tenant) ? data.tenant : undefined;
      if (tenant !== undefined && job.priority > 0) await leaveLine(ctx, tenant, sessionId);
      const outcome = await drainSession(ctx, sessionId, signal, tenant).catch((error: unknown) => {
        ctx.metrics.drainEnded('error');
        throw error;
      });
      ctx.metrics.drainEnded(outcome.kind);
      if (outcome.kind === 'busy') {
        await job.moveToDelayed(outcome.retryAt, token);
        throw new DelayedError();
      }
      return outcome;
    }
    case JOB.send:
    case JOB.resume:
      return ingestInOrder(ctx, order, job, job.name, token, signal);
    case JOB.timer: {
      const result = await fireTimerJob(ctx, job.data);
      if (result.outcome === 'early' || result.outcome === 'postponed') {
        await job.moveToDelayed(result.dueAt, token);
        throw new DelayedError();
      }
      return result;
    }
    case JOB.sweep:
      return sweep(ctx);
    default:
      throw new JobUnknownError(`unknown job name "${job.name}" (expected ${HANDLED_JOBS.join(', ')})`);
  }
}

/**
 * Throws `job.invalid_id` for a job stored under an id that is not UTF-8 text, once it is under the id
 * the worker reads, where BullMQ can fail it (`src/worker/unreadable-job-id.ts`). The message gives
 * the stored id's length only.
 */
async function refuseUnreadableId(ctx: WorkerContext, job: Job, token: string | undefined): Promise<void> {
  const stored = await reidentifyJob(ctx.redis, { id: job.id, queueQualifiedName: job.queueQualifiedName, token });
  if (stored === null) return;
  // The id as read is another job's: BullMQ cannot fail this one, its stalled check will; still nothing is written.
  if (!stored.moved) ctx.logger.warn({ jobId: job.id, jobName: job.name }, 'job id is not UTF-8 and its readable form is taken');
  throw new JobInvalidIdError(`the job id is not valid UTF-8 text (${stored.bytes} bytes)`);
}

/**
 * A prioritized drain leaves its tenant's line as it starts (docs/fair-dispatch.md), so the tenant's
 * next kicks rank one place earlier. A ZREM that fails only leaves a stale member, which the sweeper
 * trims: the drain goes on.
 */
async function leaveLine(ctx: WorkerContext, tenant: string, sessionId: string): Promise<void> {
  await leaveFairLine(ctx.redis, ctx.queue.keyRoot(ctx.queue.for(sessionId)), tenant, sessionId).catch((error: unknown) => ctx.logger.warn({ err: error, sessionId, tenant }, 'drain did not leave its tenant line; the sweeper trims it'));
}

/**
 * Ingests a raw job once every raw job of its session added before it has been (src/worker/raw-ingest-order.ts),
 * so a session's raw inputs get their seqs in add order. Put back as delayed while one before it waits
 * for a retry; released once its input is committed or it is rejected.
 */
async function ingestInOrder(ctx: WorkerContext, order: RawIngestOrder, job: Job, kind: 'send' | 'resume', token: string | undefined, signal: AbortSignal | undefined): Promise<IngestResult> {
  const sessionId = rawSessionId(job.data);
  const ref = { id: job.id ?? '', queueQualifiedName: job.queueQualifiedName };
  let deferrals = 0;
  if (sessionId !== undefined && job.id !== undefined) {
    const gate = await order.take(ref, sessionId, signal);
    if (!gate.go) {
      await order.deferred(ref);
      await job.moveToDelayed(gate.deferUntil, token);
      ctx.metrics.jobDone(kind, 'ordered');
      throw new RetryLaterError();
    }
    deferrals = gate.deferrals;
  }
  try {
    const result = await ingestJob(ctx, kind, job.id, job.data, job.timestamp);
    if (sessionId !== undefined) await order.release(ref, sessionId);
    return result;
  } catch (error) {
    if (sessionId !== undefined && isRejection(error)) await order.release(ref, sessionId).catch(() => undefined);
    // Over its tenant's admission rate: ingested later, when the bucket has a token again. Not a
    // failure, so it does not count toward the starts a failing ingest is allowed.
    if (error instanceof TenantRateLimitedError) {
      await job.moveToDelayed(ctx.clock.now() + rateLimitedDelayMs(error), token);
      throw new DelayedError();
    }
    // Not yet in Postgres, so failing the job would lose the input (I1): a producer in any
    // language may leave BullMQ's default of one attempt. Try again later, within a bound. Starts
    // that only waited for the jobs before it do not count.
    const starts = job.attemptsStarted - deferrals;
    if (isRejection(error) || starts >= RAW_INGEST_MAX_STARTS) throw error;
    const delayMs = rawIngestDelayMs(starts);
    ctx.logger.warn({ jobId: job.id, jobName: job.name, attempt: starts, delayMs, err: error }, 'raw input not ingested; trying again');
    await job.moveToDelayed(ctx.clock.now() + delayMs, token);
    // Counted as what it is, a failure retried later, not as the `delayed` of a busy lease.
    ctx.metrics.jobDone(job.name, 'retry');
    throw new RetryLaterError();
  }
}
