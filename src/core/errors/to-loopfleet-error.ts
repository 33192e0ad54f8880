import { LoopfleetError } from './loopfleet-error.js';
import { InternalError } from './system-errors.js';

/** Convert an unknown throwable once, at a catch boundary. */
export function toLoopfleetError(value: unknown): LoopfleetError {
  if (value instanceof LoopfleetError) return value;
  const message = value instanceof Error ? value.message : String(value);
  return new InternalError(message, { cause: value });
}
