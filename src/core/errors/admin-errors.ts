import { LoopfleetError } from './loopfleet-error.js';

/** No budget has that id (or the caller's tenant has none with it: the two are not told apart). */
export class BudgetNotFoundError extends LoopfleetError {
  readonly code = 'budget.not_found';
  readonly retryable = false;
  readonly fault = 'input' as const;
}
