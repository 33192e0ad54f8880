import { LoopfleetError } from './loopfleet-error.js';

export class LlmTimeoutError extends LoopfleetError {
  readonly code = 'llm.timeout';
  readonly retryable = true;
  readonly fault = 'system' as const;
}

export class LlmRetryExhaustedError extends LoopfleetError {
  readonly code = 'llm.retry_exhausted';
  readonly retryable = false;
  readonly fault = 'system' as const;
}

/** A 4xx the provider will answer the same way again (400, 401, 403, 404, 422 …). */
export class LlmNonRetryableError extends LoopfleetError {
  readonly code = 'llm.non_retryable';
  readonly retryable = false;
  readonly fault = 'system' as const;
}

/** A retryable provider failure (408, 409, 429, 5xx, connection reset) before the policy gives up. */
export class LlmTransientError extends LoopfleetError {
  readonly code = 'llm.transient';
  readonly retryable = true;
  readonly fault = 'system' as const;
}

/** The model's reply could not be used (malformed stream, unparseable structured output). */
export class OutputInvalidError extends LoopfleetError {
  readonly code = 'output.invalid';
  readonly retryable = false;
  readonly fault = 'model' as const;
}

/** The provider answered with something that is not its protocol (malformed SSE chunk, bad JSON). */
export class LlmBadResponseError extends LoopfleetError {
  readonly code = 'llm.bad_response';
  readonly retryable = true;
  readonly fault = 'system' as const;
}
