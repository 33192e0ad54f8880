import type { Logger } from 'pino';
import { finishingCancel } from '../core/loop/run-outcomes.js';

/**
 * Whether a durable cancel request applies to a run: it was made once the run's input had started
 * (both times are the database's). An older request was made while the session was idle or for an
 * earlier input, and cancels nothing.
 */
export function requestedDuringRun(requested: Date | null, startedAt: Date | null): boolean {
  return requested !== null && startedAt !== null && requested.getTime() >= startedAt.getTime();
}

/** Reads the session's durable cancel request (`FleetStore.readCancelRequest`). */
export type ReadCancelRequest = (sessionId: string) => Promise<Date | null>;

interface RegisteredRun {
  controller: AbortController;
  startedAt: Date | null;
}

/**
 * The runs this worker holds, by session, so a cancel reaches the running input at once
 * (docs/fleet.md). The durable request in Postgres is what cancels; a message on the cancel channel
 * only says "look now": anyone allowed to PUBLISH on the queue's Redis can send one, so on its own
 * it proves nothing (docs/invariants.md, S2). The periodic re-read of the flag covers a message lost
 * on the way.
 */
export class CancelRegistry {
  readonly #runs = new Map<string, RegisteredRun>();
  /** Sessions whose flag is being read, and whether another message came meanwhile. */
  readonly #checks = new Map<string, { again: boolean }>();
  readonly #read: ReadCancelRequest;
  readonly #logger: Logger;

  constructor(read: ReadCancelRequest, logger: Logger) {
    this.#read = read;
    this.#logger = logger;
  }

  /**
   * Registers the controller of the run now holding `sessionId`, whose input started at `startedAt`
   * (as the claim read it); returns the unregister function.
   */
  register(sessionId: string, controller: AbortController, startedAt: Date | null): () => void {
    const run = { controller, startedAt };
    this.#runs.set(sessionId, run);
    return () => {
      if (this.#runs.get(sessionId) === run) this.#runs.delete(sessionId);
    };
  }

  /**
   * A message on the cancel channel named `sessionId`: when this worker runs an input of the
   * session, reads the durable request and cancels the run if it was made after the input started
   * — what `queue.cancel()` writes before it publishes. One read at a time per session: messages
   * arriving meanwhile (a flood of forged ones included) make one more read once it answers, since a
   * real request may have landed after the read began. Resolves with whether it cancelled the run.
   */
  async signalled(sessionId: string): Promise<boolean> {
    if (!this.#runs.has(sessionId)) {
      this.#logger.debug({ sessionId }, 'cancel message for a session this worker does not run; ignored');
      return false;
    }
    const pending = this.#checks.get(sessionId);
    if (pending !== undefined) {
      pending.again = true;
      return false;
    }
    const check = { again: true };
    this.#checks.set(sessionId, check);
    try {
      while (check.again) {
        check.again = false;
        if (await this.#check(sessionId)) return true;
      }
      return false;
    } finally {
      this.#checks.delete(sessionId);
    }
  }

  get size(): number {
    return this.#runs.size;
  }

  async #check(sessionId: string): Promise<boolean> {
    const run = this.#runs.get(sessionId);
    if (run === undefined || run.controller.signal.aborted) return false;
    let requested: Date | null;
    try {
      requested = await this.#read(sessionId);
    } catch (error) {
      // The periodic re-read of the flag tries again.
      this.#logger.warn({ err: error, sessionId }, 'cancel flag check failed');
      return false;
    }
    // Only the run the request was read for: a run that ended meanwhile is past cancelling.
    if (this.#runs.get(sessionId) !== run || run.controller.signal.aborted) return false;
    if (!requestedDuringRun(requested, run.startedAt)) {
      this.#logger.debug({ sessionId }, 'cancel message without a cancel request for the running input; ignored');
      return false;
    }
    run.controller.abort(finishingCancel('cancelled by request'));
    return true;
  }
}
