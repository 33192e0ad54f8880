import { ToolDefinitionError } from '../errors/index.js';
import { createSchemaCompiler, type SchemaCompiler } from './schema-compiler.js';
import type { AnyToolDefinition, JsonSchema, RegisteredTool, ToolSpec } from './tool-types.js';
import { compileArgumentsValidator, type ArgumentsValidator } from './validate-tool-arguments.js';

/** The providers' rule for function names. */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** Per-call limit when a definition sets none, in milliseconds. */
export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;
/** The largest `timeoutMs` a definition may declare: one hour, in milliseconds. */
export const MAX_TOOL_TIMEOUT_MS = 3_600_000;

export interface ValidateToolDefinitionOptions {
  /** Compiles the schema; a registry passes its own so validators are cached in it. Default: a fresh one. */
  compiler?: SchemaCompiler;
  /** Position in the tools array, to name a definition that has no usable name. */
  index?: number;
}

/**
 * Validates a user tool definition at load (I8: bad configuration fails at start-up with a
 * message that says what to fix) and resolves it into a `RegisteredTool`. Every problem of the
 * definition is listed in one `ToolDefinitionError` naming the tool.
 */
export function validateToolDefinition(value: unknown, options: ValidateToolDefinitionOptions = {}): RegisteredTool {
  const label = describeDefinition(value, options.index);
  if (!isPlainObject(value)) {
    throw definitionError(label, [`a tool definition must be an object, got ${kindOf(value)}`]);
  }
  const problems = fieldProblems(value);
  const name = typeof value['name'] === 'string' ? value['name'] : '(unnamed)';
  const compiled = compileParameters(options.compiler ?? createSchemaCompiler(), name, value['parameters']);
  if (typeof compiled === 'string') problems.push(compiled);
  if (problems.length > 0 || typeof compiled === 'string') throw definitionError(label, problems);
  return resolve(value as unknown as AnyToolDefinition, compiled.schema, compiled.checkArguments);
}

function resolve(definition: AnyToolDefinition, schema: JsonSchema, checkArguments: ArgumentsValidator): RegisteredTool {
  const spec: ToolSpec = Object.freeze({ name: definition.name, description: definition.description, parameters: schema });
  return Object.freeze({
    name: definition.name,
    spec,
    policy: definition.policy ?? 'retry',
    concurrencySafe: definition.concurrencySafe ?? false,
    timeoutMs: definition.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
    execute: (args: Record<string, unknown>, ctx: Parameters<RegisteredTool['execute']>[1]) =>
      definition.execute(args as never, ctx),
    checkArguments,
  });
}

function fieldProblems(def: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const { name, description, execute, policy, timeoutMs, concurrencySafe } = def;
  if (typeof name !== 'string' || !TOOL_NAME_PATTERN.test(name)) {
    problems.push(`name must be 1–64 characters of letters, digits, "_" or "-", got ${preview(name)}`);
  }
  if (typeof description !== 'string') problems.push(`description must be a string, got ${kindOf(description)}`);
  if (typeof execute !== 'function') problems.push(`execute must be a function, got ${kindOf(execute)}`);
  if (policy !== undefined && policy !== 'retry' && policy !== 'fail') {
    problems.push(`policy must be "retry" or "fail", got ${preview(policy)}`);
  }
  if (timeoutMs !== undefined && !isValidTimeout(timeoutMs)) {
    problems.push(`timeoutMs must be a positive integer of at most ${MAX_TOOL_TIMEOUT_MS} (milliseconds), got ${preview(timeoutMs)}`);
  }
  if (concurrencySafe !== undefined && typeof concurrencySafe !== 'boolean') {
    problems.push(`concurrencySafe must be a boolean, got ${kindOf(concurrencySafe)}`);
  }
  return problems;
}

function isValidTimeout(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= MAX_TOOL_TIMEOUT_MS;
}

/**
 * Checks that `parameters` is an object schema, clones it (later edits of the user's object cannot
 * desync it from its validator), compiles and freezes it. Returns the problem as text on failure.
 */
function compileParameters(compiler: SchemaCompiler, name: string, parameters: unknown): { schema: JsonSchema; checkArguments: ArgumentsValidator } | string {
  if (!isPlainObject(parameters)) return `parameters must be a JSON Schema object, got ${kindOf(parameters)}`;
  if (parameters['type'] !== 'object') {
    return `parameters must describe an object (type: "object"), got type ${preview(parameters['type'])}`;
  }
  let schema: JsonSchema;
  try {
    schema = structuredClone(parameters);
  } catch (error) {
    return `parameters must be plain JSON data: ${messageOf(error)}`;
  }
  try {
    const checkArguments = compileArgumentsValidator(compiler.for(schema), name, schema);
    return { schema: deepFreeze(schema), checkArguments };
  } catch (error) {
    return `parameters is not a valid JSON Schema: ${messageOf(error)}`;
  }
}

function definitionError(label: string, problems: readonly string[]): ToolDefinitionError {
  return new ToolDefinitionError(`invalid ${label}: ${problems.join('; ')}`, { details: { tool: label, problems: [...problems] } });
}

function describeDefinition(value: unknown, index: number | undefined): string {
  const name = isPlainObject(value) ? value['name'] : undefined;
  if (typeof name === 'string' && name.length > 0) return `tool "${name.slice(0, 80)}"`;
  return index === undefined ? 'tool definition' : `tool definition #${index}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : typeof value;
}

function preview(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : kindOf(value);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
