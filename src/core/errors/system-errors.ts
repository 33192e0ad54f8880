import { LoopfleetError } from './loopfleet-error.js';

/**
 * The caller's lease token is no longer the session's current one: another worker took the session
 * over (I3). The write that detected it changed nothing. Not retryable by the caller — the
 * new holder owns the session now.
 */
export class LeaseLostError extends LoopfleetError {
  readonly code = 'lease.lost';
  readonly retryable = false;
  readonly fault = 'system' as const;
}

/** Persisted state that fails validation on load: refuse it rather than guess. */
export class StateCorruptError extends LoopfleetError {
  readonly code = 'state.corrupt';
  readonly retryable = false;
  readonly fault = 'system' as const;
}

/** A database, Redis or network failure we did not classify further. Usually worth retrying. */
export class InfrastructureError extends LoopfleetError {
  readonly code = 'system.infrastructure';
  readonly retryable = true;
  readonly fault = 'system' as const;
}

/** The work was cancelled (user cancel, interrupt, shutdown). */
export class CancelledError extends LoopfleetError {
  readonly code = 'cancelled';
  readonly retryable = false;
  readonly fault = 'system' as const;
}

/** Anything thrown that was not a LoopfleetError, converted once, at a catch. */
export class InternalError extends LoopfleetError {
  readonly code = 'internal';
  readonly retryable = false;
  readonly fault = 'system' as const;
}

/** A state transition that the current state does not allow (finishing an input that is not running). */
export class StateConflictError extends LoopfleetError {
  readonly code = 'state.conflict';
  readonly retryable = false;
  readonly fault = 'system' as const;
}
