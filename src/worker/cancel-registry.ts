import { finishingCancel } from '../core/loop/run-outcomes.js';

/**
 * The runs this worker holds, by session, so a cancel request arriving on the pub/sub channel
 * reaches the running input at once (docs/fleet.md). The durable copy (the session's cancel flag)
 * covers a message lost while no run was registered.
 */
export class CancelRegistry {
  readonly #runs = new Map<string, AbortController>();

  /** Registers the controller of the run now holding `sessionId`; returns the unregister function. */
  register(sessionId: string, controller: AbortController): () => void {
    this.#runs.set(sessionId, controller);
    return () => {
      if (this.#runs.get(sessionId) === controller) this.#runs.delete(sessionId);
    };
  }

  /** Cancels the run of `sessionId` if this worker holds one; true when it did. */
  cancel(sessionId: string, reason = 'cancelled by request'): boolean {
    const controller = this.#runs.get(sessionId);
    if (controller === undefined || controller.signal.aborted) return false;
    controller.abort(finishingCancel(reason));
    return true;
  }

  get size(): number {
    return this.#runs.size;
  }
}
