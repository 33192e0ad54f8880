import { LoopfleetError } from './loopfleet-error.js';

/** Tool errors are data: the loop turns them into tool results the model sees. */
abstract class ToolFault extends LoopfleetError {
  readonly retryable = false;
  readonly fault = 'model' as const;
}

export class ToolNotFoundError extends ToolFault {
  readonly code = 'tool.not_found';
}

export class ToolInvalidArgsError extends ToolFault {
  readonly code = 'tool.invalid_args';
}

export class ToolTimeoutError extends LoopfleetError {
  readonly code = 'tool.timeout';
  readonly retryable = false;
  readonly fault = 'system' as const;
}

export class ToolFailedError extends LoopfleetError {
  readonly code = 'tool.failed';
  readonly retryable = false;
  readonly fault = 'system' as const;
}

/** A tool definition (from LOOPFLEET_TOOLS) that is not valid: bad name, bad JSON Schema, no execute. */
export class ToolDefinitionError extends LoopfleetError {
  readonly code = 'tool.definition_invalid';
  readonly retryable = false;
  readonly fault = 'config' as const;
}
