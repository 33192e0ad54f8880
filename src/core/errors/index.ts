export * from './loopfleet-error.js';
export * from './input-errors.js';
export * from './system-errors.js';
export * from './llm-errors.js';
export * from './tool-errors.js';
export * from './auth-errors.js';
export * from './budget-errors.js';
export * from './admin-errors.js';
export * from './to-loopfleet-error.js';
export * from './thrown-text.js';

/** Every stable code, for documentation and the frozen-codes test. */
export const ERROR_CODES = [
  'config.invalid',
  'session.invalid_id',
  'session.not_found',
  'session.exists',
  'session.pending',
  'session.agent_mismatch',
  'session.tenant_mismatch',
  'session.queue_mismatch',
  'interaction.not_pending',
  'agent.not_found',
  'input.invalid',
  'input.too_large',
  'input.not_found',
  'job.unknown',
  'job.invalid_id',
  'lease.lost',
  'state.corrupt',
  'state.conflict',
  'system.infrastructure',
  'cancelled',
  'internal',
  'llm.timeout',
  'llm.retry_exhausted',
  'llm.non_retryable',
  'llm.transient',
  'llm.bad_response',
  'output.invalid',
  'tool.not_found',
  'tool.invalid_args',
  'tool.timeout',
  'tool.failed',
  'tool.definition_invalid',
  'auth.missing_token',
  'auth.invalid_token',
  'auth.expired',
  'auth.forbidden',
  'budget.exceeded',
  'tenant.rate_limited',
  'budget.not_found',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];
