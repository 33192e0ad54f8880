import type { ClaimedInput } from '../core/ports/session-store.js';
import { runInput } from '../core/loop/run-input.js';
import { finishingCancel } from '../core/loop/run-outcomes.js';
import type { InputResult } from '../core/session-types.js';
import type { WorkerContext } from './worker-context.js';

/**
 * Runs one claimed input with the fleet around the loop: lifecycle events on the session's stream,
 * the cancel registry (pub/sub cancel reaches this run at once), the durable cancel flag, and the
 * input's `input_finished` event — also for steering inputs that joined it, so every input gets
 * exactly one (I6).
 */
export async function runClaimedInput(
  ctx: WorkerContext,
  sessionId: string,
  leaseToken: number,
  claimed: ClaimedInput,
  stop: AbortSignal,
): Promise<InputResult> {
  const { input, resumed } = claimed;
  await ctx.publisher.publish(
    sessionId,
    input.seq,
    resumed ? { type: 'input_resumed', reason: 'worker_lost', attempt: input.attempts } : { type: 'input_started', attempt: input.attempts },
  );
  const cancel = new AbortController();
  let stopWatch = (): void => {};
  const unregister = ctx.cancels.register(sessionId, cancel);
  const sink = ctx.publisher.runSink(sessionId, input.seq);
  const steered: number[] = [];
  try {
    await applyDurableCancel(ctx, sessionId, leaseToken, input.startedAt, cancel);
    stopWatch = watchDurableCancel(ctx, sessionId, input.startedAt, cancel);
    const result = await runInput(
      {
        ...ctx.loop,
        sink: {
          emit: (event) => {
            if (event.type === 'steer_applied') steered.push(...event.inputSeqs);
            sink.emit(event);
          },
        },
      },
      { sessionId, leaseToken, input, resumed, signal: AbortSignal.any([stop, cancel.signal]) },
    );
    await sink.flush();
    const finished = await ctx.store.getInput(sessionId, input.seq);
    const error = finished?.errorCode == null ? null : { code: finished.errorCode, message: finished.errorMessage ?? '' };
    await ctx.publisher.publish(sessionId, input.seq, { type: 'input_finished', ...result, error });
    // A resumed run did not see the steering its dead predecessor applied: those inputs are in Postgres.
    if (resumed) steered.unshift(...(await steeredBefore(ctx, sessionId, input.seq, steered)));
    for (const seq of steered) {
      await ctx.publisher.publish(sessionId, seq, { type: 'input_finished', ...result, error, steeredInto: input.seq });
    }
    return result;
  } finally {
    stopWatch();
    unregister();
    await sink.close();
  }
}

/** Inputs steered into `hostSeq` by an earlier holder of the run (not in `known`), in seq order. */
async function steeredBefore(ctx: WorkerContext, sessionId: string, hostSeq: number, known: number[]): Promise<number[]> {
  const later = await ctx.store.listInputs(sessionId, { status: 'done', afterSeq: hostSeq, limit: 1000 });
  return later.filter((entry) => entry.steeredInto === hostSeq && !known.includes(entry.seq)).map((entry) => entry.seq);
}

/**
 * A cancel requested while this input was running (before a crash, or while no run was registered
 * to hear the pub/sub message) is honoured now; an older request, made while the session was idle or
 * for an earlier input, is cleared without effect.
 */
async function applyDurableCancel(
  ctx: WorkerContext,
  sessionId: string,
  leaseToken: number,
  startedAt: Date | null,
  cancel: AbortController,
): Promise<void> {
  const session = await ctx.store.getSession(sessionId);
  const requested = session?.cancelRequestedAt ?? null;
  if (requested === null) return;
  await ctx.store.clearCancel({ sessionId, leaseToken });
  if (startedAt !== null && requested.getTime() >= startedAt.getTime()) cancel.abort(finishingCancel('cancelled by request'));
}

/**
 * The durable flag is also re-read while the run goes on (every third of the lease), so a cancel
 * whose pub/sub message was lost — the subscriber reconnecting, say — still stops the run in seconds.
 */
function watchDurableCancel(ctx: WorkerContext, sessionId: string, startedAt: Date | null, cancel: AbortController): () => void {
  if (startedAt === null) return () => {};
  const timer = setInterval(() => {
    ctx.store.getSession(sessionId).then(
      (session) => {
        const requested = session?.cancelRequestedAt ?? null;
        if (requested !== null && requested.getTime() >= startedAt.getTime() && !cancel.signal.aborted) cancel.abort(finishingCancel('cancelled by request'));
      },
      (error: unknown) => ctx.logger.warn({ err: error, sessionId }, 'cancel flag check failed'),
    );
  }, Math.max(500, Math.floor(ctx.settings.leaseTtlMs / 3)));
  timer.unref();
  return () => clearInterval(timer);
}
