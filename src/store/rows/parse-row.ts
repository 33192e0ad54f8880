import type { z } from 'zod';
import { StateCorruptError } from '../../core/errors/index.js';

/**
 * Validates one loaded row: stored state is untrusted. A row that does not match is refused with
 * `state.corrupt` naming the row and the first problems, rather than handed on half-understood.
 */
export function parseRow<T>(schema: z.ZodType<T>, row: unknown, what: string): T {
  const parsed = schema.safeParse(row);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.slice(0, 5).map((issue) => ({
    path: issue.path.map(String).join('.'),
    message: issue.message,
  }));
  const summary = issues.map((issue) => `${issue.path === '' ? '(row)' : issue.path}: ${issue.message}`).join('; ');
  throw new StateCorruptError(`${what} failed validation: ${summary}`, { details: { row: what, issues } });
}
