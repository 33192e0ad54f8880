/** Tools: definition, validation at load, the registry, argument parsing and checking, execution. */
export type {
  AnyToolDefinition,
  ArgumentsCheck,
  InDoubtPolicy,
  JsonSchema,
  RegisteredTool,
  ToolContext,
  ToolDefinition,
  ToolOutcome,
  ToolOutcomeErrorCode,
  ToolSpec,
} from './tool-types.js';
export { defineTool } from './define-tool.js';
export { ToolResultWithImages } from './tool-result-images.js';
export {
  DEFAULT_TOOL_TIMEOUT_MS,
  MAX_TOOL_TIMEOUT_MS,
  TOOL_NAME_PATTERN,
  validateToolDefinition,
  type ValidateToolDefinitionOptions,
} from './validate-definition.js';
export { createSchemaCompiler } from './schema-compiler.js';
export { ToolRegistry, type ToolAllowlist } from './tool-registry.js';
export { parseToolArguments, escapeControlCharactersInStrings, nestsDeeperThan, MAX_ARGUMENT_DEPTH, type ParsedToolArguments } from './parse-tool-arguments.js';
export { compileArgumentsValidator, formatSchemaErrors, type ArgumentsValidator } from './validate-tool-arguments.js';
export { serialiseToolResult, type SerialisedToolResult } from './serialise-tool-result.js';
export { DEFAULT_MAX_RESULT_CHARS, truncateToolResult } from './truncate-tool-result.js';
export { invokeToolHandler, type HandlerResult, type InvokeToolHandlerOptions } from './invoke-tool-handler.js';
export { executeToolCall, type ExecuteToolCallOptions } from './execute-tool-call.js';
export { planToolBatch, type ToolBatchSegment } from './plan-tool-batch.js';
export { DEFAULT_TOOL_CONCURRENCY, runToolBatch, type RunToolBatchOptions } from './run-tool-batch.js';
export { SCHEDULE_WAKEUP, scheduleWakeupTool, type ScheduleWakeupArgs } from './schedule-wakeup-tool.js';
export { REQUEST_USER_INPUT, currentTimeTool, requestUserInputTool, type CurrentTime, type RequestUserInputArgs } from './builtin-tools.js';
export { SPAWN_AGENT, MAX_TASK_CHARS, spawnAgentTool, type SpawnAgentArgs } from './spawn-agent-tool.js';
