import { LoopfleetError } from './loopfleet-error.js';

/** Bad input from outside: job data, ids, payloads. Never retryable — the same input fails again. */
abstract class InputFault extends LoopfleetError {
  readonly retryable = false;
  readonly fault = 'input' as const;
}

export class ConfigInvalidError extends LoopfleetError {
  readonly code = 'config.invalid';
  readonly retryable = false;
  readonly fault = 'config' as const;
}

export class SessionInvalidIdError extends InputFault {
  readonly code = 'session.invalid_id';
}

export class SessionNotFoundError extends InputFault {
  readonly code = 'session.not_found';
}

export class SessionExistsError extends InputFault {
  readonly code = 'session.exists';
}

export class InputInvalidError extends InputFault {
  readonly code = 'input.invalid';
}

/** The session has no input with that seq (the gateway's one-input route). */
export class InputNotFoundError extends InputFault {
  readonly code = 'input.not_found';
}

export class InputTooLargeError extends InputFault {
  readonly code = 'input.too_large';
}

export class JobUnknownError extends InputFault {
  readonly code = 'job.unknown';
}

/**
 * A raw job whose id, as stored in Redis, is not UTF-8 text (half a UTF-16 surrogate pair packed by
 * BullMQ's Node client): the id a worker reads back names no key of the job.
 */
export class JobInvalidIdError extends InputFault {
  readonly code = 'job.invalid_id';
}

/**
 * The session is waiting for a human answer (`request_user_input`) and a new `send` arrived. Recover
 * with `submitInput` or `abortPending`.
 */
export class SessionPendingError extends InputFault {
  readonly code = 'session.pending';
}

/**
 * An answer (`submitInput`, a `resume` with `submit`) names an interaction id that is not one of the
 * questions the session is waiting on: a typo, an old question already answered, or a session that
 * asked nothing. `details.pending` lists the ids it waits on (empty when none).
 */
export class InteractionNotPendingError extends InputFault {
  readonly code = 'interaction.not_pending';
}

/** A session or an input names an agent no worker serves (docs/agents.md). */
export class AgentNotFoundError extends InputFault {
  readonly code = 'agent.not_found';
}

/** An add names another agent than the one its session already runs on (docs/agents.md). */
export class SessionAgentMismatchError extends InputFault {
  readonly code = 'session.agent_mismatch';
}

/** An add or a create names another tenant than the one its session belongs to (docs/client.md). */
export class SessionTenantMismatchError extends InputFault {
  readonly code = 'session.tenant_mismatch';
}

/** An add reaches a session that runs on another queue (`LOOPFLEET_QUEUE`) of the same database (docs/fleet.md). */
export class SessionQueueMismatchError extends InputFault {
  readonly code = 'session.queue_mismatch';
}
