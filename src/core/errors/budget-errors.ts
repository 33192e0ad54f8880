import { LoopfleetError } from './loopfleet-error.js';

/**
 * A budget has no room for the next LLM call (docs/tenants.md). `details`: `budgetId`, `scope`,
 * `tenant`, `agent`, `sessionId` (the budget's target), `unit` (`tokens` or `usd`), `period`,
 * `windowStart`, `limit` and `used` (tokens, or USD as a number). The input ends `budget_exceeded`
 * with what it produced kept; raising the cap or the next window lets later inputs run.
 */
export class BudgetExceededError extends LoopfleetError {
  readonly code = 'budget.exceeded';
  readonly retryable = false;
  readonly fault = 'input' as const;
}

/**
 * The tenant admits no more inputs this second (`maxInputsPerSecond`, docs/tenants.md).
 * `details.retryAfterMs` says when the next one will be admitted.
 */
export class TenantRateLimitedError extends LoopfleetError {
  readonly code = 'tenant.rate_limited';
  readonly retryable = true;
  readonly fault = 'input' as const;
}
