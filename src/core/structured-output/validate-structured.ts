/**
 * Structured output against the full JSON Schema of a response format. power-loop
 * only checked `type` and top-level `required` locally; a provider's strict mode is not universal
 * (OpenAI-compatible endpoints, Anthropic), so loopfleet validates the whole schema itself with ajv.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { InputInvalidError } from '../errors/index.js';
import { createAjv, schemaDraft } from '../tools/schema-compiler.js';
import type { JsonSchema } from '../tools/tool-types.js';

/** A structured-output request: the model must answer with one JSON object matching `schema`. */
export interface ResponseFormat {
  /** 1–64 chars of `[A-Za-z0-9_-]` (OpenAI's rule for `json_schema.name`). */
  name: string;
  /** JSON Schema of the answer; its root must describe an object. Drafts 07, 2019-09 and 2020-12. */
  schema: JsonSchema;
  /** Ask the provider for strict schema adherence where it supports it. Default true. */
  strict?: boolean;
  /** Shown to the model with the schema. */
  description?: string;
}

/** A response format with its schema compiled, ready to validate many replies. */
export interface StructuredValidator {
  readonly format: ResponseFormat;
  /** Checks a parsed value; `message` lists every error with its JSON path. */
  validate(value: unknown): { ok: true } | { ok: false; message: string };
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Checks and compiles a response format, once per input. Throws `InputInvalidError` for a bad name, a
 * root that is not an object schema, or a schema ajv cannot compile: the format is part of what the
 * caller asked for, and the same request would fail the same way again.
 */
export function compileResponseFormat(format: ResponseFormat): StructuredValidator {
  if (!NAME.test(format.name)) {
    throw new InputInvalidError(`response format name must be 1–64 chars of [A-Za-z0-9_-] (got "${format.name}")`);
  }
  const rootType = format.schema.type;
  if (rootType !== undefined && rootType !== 'object' && !(Array.isArray(rootType) && rootType.includes('object'))) {
    throw new InputInvalidError(`response format "${format.name}": the schema root must be an object schema`);
  }
  let check: ValidateFunction;
  try {
    // A fresh ajv per format (no module-level state), of the draft the schema declares.
    check = createAjv(schemaDraft(format.schema)).compile(format.schema);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new InputInvalidError(`response format "${format.name}": invalid JSON Schema: ${reason}`, { cause: error });
  }
  return {
    format,
    validate(value) {
      if (check(value)) return { ok: true };
      return { ok: false, message: formatSchemaErrors(check.errors ?? []) };
    },
  };
}

/** `/items/0/age must be integer; (root) must have required property 'name'`. */
export function formatSchemaErrors(errors: readonly ErrorObject[]): string {
  if (errors.length === 0) return 'the value does not match the schema';
  return errors
    .map((error) => {
      const path = error.instancePath === '' ? '(root)' : error.instancePath;
      const extra = error.keyword === 'additionalProperties' ? ` '${String(error.params.additionalProperty)}'` : '';
      return `${path} ${error.message ?? `fails ${error.keyword}`}${extra}`;
    })
    .join('; ');
}
