/** The LLM retry policy: classification, backoff, `retry-after`, and the retry runner. */
export { DEFAULT_RETRY_POLICY, resolveRetryPolicy, type RetryPolicy } from './retry-policy.js';
export { backoffDelayMs, type BackoffInput } from './backoff-delay.js';
export { classifyLlmError, httpStatusOf, isRetryableStatus, type LlmErrorClassification, type LlmErrorReason } from './classify-llm-error.js';
export { retryAfterMs } from './retry-after.js';
export { runWithRetry, type AttemptFailure, type RetryableCall, type RunWithRetryOptions } from './run-with-retry.js';
