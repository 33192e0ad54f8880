import type { Ajv, ErrorObject } from 'ajv';
import type { ArgumentsCheck, JsonSchema } from './tool-types.js';

/** Checks parsed arguments against one tool's schema. */
export type ArgumentsValidator = (args: Record<string, unknown>) => ArgumentsCheck;

/** At most this many schema errors are listed; the rest are counted. */
const MAX_LISTED_ERRORS = 20;

/**
 * Compiles a tool's argument schema once and returns a validator producing a readable message, e.g.
 * `invalid arguments for tool "search": /limit must be <= 50; must have required property 'query'`.
 * Throws ajv's own error when the schema does not compile (the caller turns it into a
 * `tool.definition_invalid` at load).
 */
export function compileArgumentsValidator(ajv: Ajv, toolName: string, schema: JsonSchema): ArgumentsValidator {
  const validate = ajv.compile(schema);
  // An `$async` schema compiles to a validator that answers with a promise, which every call would
  // take for "valid" (and whose rejection nobody would handle): refused at load instead.
  if ((validate as { $async?: unknown }).$async === true) throw new Error('an asynchronous schema ($async) is not supported: arguments are checked synchronously');
  return (args) => {
    // Only `true` passes: anything else a validator might answer is not a yes.
    if (validate(args) === true) return { ok: true };
    // `validate.errors` belongs to the last call; read it before anything else can validate again.
    const errors = validate.errors ?? [];
    return { ok: false, message: `invalid arguments for tool "${toolName}": ${formatSchemaErrors(errors)}` };
  };
}

/** Each error as `<JSON pointer> <message>` (no pointer for the root object), joined with `; `. */
export function formatSchemaErrors(errors: readonly ErrorObject[]): string {
  const lines = [...new Set(errors.map(formatSchemaError))];
  if (lines.length === 0) return 'arguments do not match the schema';
  const listed = lines.slice(0, MAX_LISTED_ERRORS);
  const rest = lines.length - listed.length;
  return rest > 0 ? `${listed.join('; ')}; … and ${rest} more` : listed.join('; ');
}

function formatSchemaError(error: ErrorObject): string {
  const message = `${error.message ?? 'is invalid'}${detail(error)}`;
  return error.instancePath === '' ? message : `${error.instancePath} ${message}`;
}

/** What ajv's generic message leaves out but the model needs to fix the call. */
function detail(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'additionalProperties') return ` (found ${JSON.stringify(params['additionalProperty'])})`;
  if (error.keyword === 'enum' && Array.isArray(params['allowedValues'])) {
    return `: ${params['allowedValues'].map((value) => JSON.stringify(value)).join(', ')}`;
  }
  return '';
}
