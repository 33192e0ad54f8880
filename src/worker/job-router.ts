import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { isLoopfleetError, JobUnknownError } from '../core/errors/index.js';
import { assertSessionId } from '../core/session-id.js';
import { JOB } from '../producer/fleet-keys.js';
import { drainSession } from './drain-session.js';
import { ingestJob } from './ingest-job.js';
import { sweep } from './sweep-job.js';
import type { WorkerContext } from './worker-context.js';

/**
 * The processor of every job on the queue, and the ONE place where outcomes become BullMQ's
 * (STYLE.md 7): success is the return value; "another worker holds the lease" is a delay
 * (`moveToDelayed` + `DelayedError`, never a silent completion); bad input or configuration is an
 * `UnrecoverableError` carrying the typed code (no retry, the queue keeps flowing); anything else
 * is thrown for BullMQ to retry with backoff.
 */
export function createJobProcessor(ctx: WorkerContext) {
  return async (job: Job, token?: string, signal?: AbortSignal): Promise<unknown> => {
    try {
      return await route(ctx, job, token, signal);
    } catch (error) {
      if (error instanceof DelayedError) throw error;
      if (isLoopfleetError(error) && !error.retryable && (error.fault === 'input' || error.fault === 'config')) {
        ctx.logger.warn({ jobId: job.id, jobName: job.name, code: error.code, err: error }, 'job rejected');
        throw new UnrecoverableError(`${error.code}: ${error.message}`);
      }
      throw error;
    }
  };
}

async function route(ctx: WorkerContext, job: Job, token: string | undefined, signal: AbortSignal | undefined): Promise<unknown> {
  switch (job.name) {
    case JOB.drain: {
      const sessionId = assertSessionId((job.data as { sessionId?: unknown } | null)?.sessionId);
      const outcome = await drainSession(ctx, sessionId, signal);
      if (outcome.kind === 'busy') {
        await job.moveToDelayed(outcome.retryAt, token);
        throw new DelayedError();
      }
      return outcome;
    }
    case JOB.send:
    case JOB.resume:
      return ingestJob(ctx, job.name, job.id, job.data);
    case JOB.sweep:
      return sweep(ctx);
    default:
      throw new JobUnknownError(`unknown job name "${job.name}" (expected ${Object.values(JOB).join(', ')})`);
  }
}
