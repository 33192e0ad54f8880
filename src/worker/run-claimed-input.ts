import type { ClaimedInput } from '../core/ports/session-store.js';
import type { InputResult } from '../core/session-types.js';
import type { FleetEvent } from '../fleet/fleet-events.js';
import { runInputOutcome, type RunOutcome } from '../core/loop/run-input.js';
import { finishingCancel } from '../core/loop/run-outcomes.js';
import { linkedSignal } from '../core/linked-signal.js';
import { requestedDuringRun } from './cancel-registry.js';
import { boundWhileStopping } from './stopping-wait.js';
import { childrenPort, deliverToParent } from './child-sessions.js';
import type { ServedAgent } from './agent-catalog.js';
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
  agent: ServedAgent,
  stop: AbortSignal,
): Promise<RunOutcome> {
  const { input, resumed, woken, session } = claimed;
  const cancel = new AbortController();
  let stopWatch = (): void => {};
  // Registered first: a pub/sub cancel reaches this run from here on (the message makes the registry
  // read the durable flag); the flag as the claim read it covers earlier requests, and the periodic
  // re-read the sliver in between.
  const unregister = ctx.cancels.register(sessionId, cancel, input.startedAt);
  // The run stops for the drain's reasons (lease lost, shutdown) or a cancel of this input.
  const runSignal = linkedSignal([stop, cancel.signal]);
  // Written under the lease: once the session is deleted, its events are refused (`eventDeletedKey`).
  const sink = ctx.publisher.runSink(sessionId, input.seq, leaseToken);
  const steered: number[] = [];
  const agentName = agent.ref.name;
  ctx.metrics.runStarted(input, resumed, agentName);
  const startedAt = performance.now();
  // The run as the metrics see it: started to outcome, without the finish's publish.
  let ended: { status: InputResult['status']; at: number } | null = null;
  try {
    // Queued, not awaited: the run's own events follow it in the same session queue (so in stream
    // order), and share its write. `input_finished` below is written after all of them.
    const start: FleetEvent =
      resumed || woken
        ? { type: 'input_resumed', reason: woken ? 'children_answered' : 'worker_lost', attempt: input.attempts, agent: agent.ref }
        : { type: 'input_started', attempt: input.attempts, agent: agent.ref };
    sink.emit(start);
    await applyDurableCancel(ctx, sessionId, leaseToken, session.cancelRequestedAt, input.startedAt, cancel);
    // A child whose tree was cancelled: what was accepted before that ends `cancelled` as it starts.
    if (session.cascadeCancelledAt !== null && input.acceptedAt <= session.cascadeCancelledAt) cancel.abort(finishingCancel('the parent session was cancelled'));
    stopWatch = watchDurableCancel(ctx, sessionId, input.startedAt, cancel);
    const outcome = await runInputOutcome(
      Object.assign({}, ctx.loop, {
        llm: agent.llm,
        tools: agent.tools(),
        profile: agent.profile,
        retryPolicy: agent.retryPolicy,
        agent: agent.ref,
        children: childrenPort(ctx),
        sink: {
          emit: (event: FleetEvent) => {
            if (event.type === 'steer_applied') steered.push(...event.inputSeqs);
            sink.emit(event);
            ctx.metrics.observe(event, agentName, session.tenant);
          },
        },
      }),
      { sessionId, leaseToken, input, resumed, woken, session, pendingInputs: claimed.pendingInputs, pendingSteers: claimed.pendingSteers, signal: runSignal.signal },
    );
    const { result, error } = outcome;
    ended = { status: result.status, at: performance.now() };
    // Parked: the input waits for its children, unfinished; it is finished (and published) when it runs on.
    if (outcome.parked) return outcome;
    ctx.metrics.inputFinished(result.status, agentName);
    await deliverToParent(ctx, session, result, error);
    // Not after a flush: the session's queue writes the finish after every event queued before it,
    // so it shares the run's last write instead of costing a round trip (and a wake-up of each
    // subscriber) of its own.
    await publishFinish(ctx, sessionId, leaseToken, input.seq, { type: 'input_finished', ...result, error });
    // A resumed run did not see the steering its dead predecessor applied, nor a woken one the child
    // results delivered into it while it waited: those inputs are in Postgres.
    if (resumed || woken) steered.unshift(...(await steeredBefore(ctx, sessionId, input.seq, steered)));
    for (const seq of steered) {
      ctx.metrics.inputFinished(result.status, agentName);
      await publishFinish(ctx, sessionId, leaseToken, seq, { type: 'input_finished', ...result, error, steeredInto: input.seq });
    }
    return outcome;
  } finally {
    ctx.metrics.runEnded(ended?.status ?? null, ((ended?.at ?? performance.now()) - startedAt) / 1000, agentName);
    stopWatch();
    runSignal.dispose();
    unregister();
    // Bounded once the worker is stopping: Redis down must not keep the drain from its lease release.
    // The finish was awaited above, so only the run's other events can be left unwritten.
    await boundWhileStopping(ctx, sink.close(), "flush of the run's events").catch((error: unknown) =>
      ctx.logger.warn({ err: error, sessionId, inputSeq: input.seq }, 'events of the run not flushed before shutdown'),
    );
  }
}

/**
 * Publishes an input's `input_finished`, under lease `leaseToken`. The publisher leaves it out ('')
 * when the input's finish is already on the stream: this holder stalled past its lease after the
 * terminal commit, and the next holder republished the event first (I6 stays exactly one). It
 * rejects with `lease.lost` when the session was deleted since, and with `StoppingWaitCutShortError`
 * when Redis does not answer while the worker stops.
 */
export async function publishFinish(
  ctx: WorkerContext,
  sessionId: string,
  leaseToken: number,
  inputSeq: number,
  event: Extract<FleetEvent, { type: 'input_finished' }>,
): Promise<void> {
  // Bounded once the worker is stopping: a cut-short publish throws, so the finish stays owed (I6).
  if ((await boundWhileStopping(ctx, ctx.publisher.publish(sessionId, inputSeq, event, leaseToken), 'input_finished publish')) !== '') return;
  ctx.logger.warn({ sessionId, inputSeq }, 'input_finished was already published by the holder that took over; not written again');
}

/** Inputs steered into `hostSeq` by an earlier holder of the run (not in `known`), in seq order. */
export async function steeredBefore(ctx: WorkerContext, sessionId: string, hostSeq: number, known: number[]): Promise<number[]> {
  const later = await ctx.store.listInputs(sessionId, { status: 'done', afterSeq: hostSeq, limit: 1000 });
  return later.filter((entry) => entry.steeredInto === hostSeq && !known.includes(entry.seq)).map((entry) => entry.seq);
}

/**
 * A cancel requested while this input was running (before a crash, or while no run was registered
 * to hear the pub/sub message) is honoured now; an older request, made while the session was idle or
 * for an earlier input, is cleared without effect. `requested` is the flag as the claim read it.
 */
async function applyDurableCancel(
  ctx: WorkerContext,
  sessionId: string,
  leaseToken: number,
  requested: Date | null,
  startedAt: Date | null,
  cancel: AbortController,
): Promise<void> {
  if (requested === null) return;
  await ctx.store.clearCancel({ sessionId, leaseToken });
  if (requestedDuringRun(requested, startedAt)) cancel.abort(finishingCancel('cancelled by request'));
}

/**
 * The durable flag is also re-read while the run goes on (every third of the lease), so a cancel
 * whose pub/sub message was lost — the subscriber reconnecting, say — still stops the run in seconds.
 * One read at a time: while Postgres hangs, reads would otherwise pile up in the pool's queue.
 */
export function watchDurableCancel(ctx: WorkerContext, sessionId: string, startedAt: Date | null, cancel: AbortController): () => void {
  if (startedAt === null) return () => {};
  let inFlight = false;
  const timer = setInterval(() => {
    if (inFlight) return;
    inFlight = true;
    ctx.store
      .getSession(sessionId)
      .then(
        (session) => {
          if (requestedDuringRun(session?.cancelRequestedAt ?? null, startedAt) && !cancel.signal.aborted) cancel.abort(finishingCancel('cancelled by request'));
        },
        (error: unknown) => ctx.logger.warn({ err: error, sessionId }, 'cancel flag check failed'),
      )
      .finally(() => {
        inFlight = false;
      });
  }, Math.max(500, Math.floor(ctx.settings.leaseTtlMs / 3)));
  timer.unref();
  return () => clearInterval(timer);
}
