import { InputInvalidError } from '../../core/errors/index.js';
import type { StepCommit } from '../../core/ports/session-store.js';
import { checkedStep } from './commit-step-fast-check.js';
import { stepSchema, type ValidatedStep } from './commit-step-schema.js';

/**
 * Checks a step before any database work, so a malformed step fails with `input.invalid` and never
 * reaches a half-applied transaction; messages and pending state are checked with the same schemas
 * used on load, so nothing is written that would later be refused as corrupt.
 */
export function validateStep(step: StepCommit): ValidatedStep {
  const checked = checkedStep(step);
  if (checked !== undefined) return checked;
  const parsed = stepSchema.safeParse(step);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.slice(0, 5).map((issue) => `${issue.path.map(String).join('.')}: ${issue.message}`);
  throw new InputInvalidError(`invalid step: ${issues.join('; ')}`, { details: { issues } });
}
