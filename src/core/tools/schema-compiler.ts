import { Ajv } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import type { JsonSchema } from './tool-types.js';

/** The installed package is CommonJS; depending on the loader its plugin is the default or `.default`. */
type FormatsPlugin = (ajv: Ajv) => unknown;
const addFormats: FormatsPlugin =
  (formatsModule as unknown as { default?: FormatsPlugin }).default ?? (formatsModule as unknown as FormatsPlugin);

/** The JSON Schema drafts ajv is created for. */
export type SchemaDraft = 'draft-07' | '2019-09' | '2020-12';

/**
 * The draft a schema declares in `$schema`: 2020-12 (zod 4's `z.toJSONSchema`, MCP tools), 2019-09,
 * or draft-07 when it declares neither (or says nothing).
 */
export function schemaDraft(schema: JsonSchema): SchemaDraft {
  const declared = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (declared.includes('2020-12')) return '2020-12';
  if (declared.includes('2019-09')) return '2019-09';
  return 'draft-07';
}

/**
 * A fresh ajv instance for one draft (no module-level mutable state: ajv caches compiled schemas
 * inside the instance).
 *
 * - `allErrors`: the model gets every problem at once, not one per round trip.
 * - `strict: false`: user schemas often carry keywords ajv does not know (`examples`, vendor `x-…`,
 *   OpenAI's `strict`); those are ignored, but a schema that cannot compile (bad `type`,
 *   unresolvable `$ref`) still throws.
 * - `logger: false`: core code never writes to the console.
 * - ajv-formats: `date-time`, `email`, `uri`, `uuid` … are checked, not ignored.
 */
export function createAjv(draft: SchemaDraft): Ajv {
  const options = { allErrors: true, strict: false, logger: false } as const;
  const ajv = draft === '2020-12' ? new Ajv2020(options) : draft === '2019-09' ? new Ajv2019(options) : new Ajv(options);
  addFormats(ajv as Ajv);
  return ajv as Ajv;
}

/**
 * Compiles tool argument schemas, each with an ajv of the draft it declares (one instance per draft,
 * made when first needed). Each registry owns its own.
 */
export class SchemaCompiler {
  readonly #byDraft = new Map<SchemaDraft, Ajv>();

  /** The ajv to compile `schema` with. */
  for(schema: JsonSchema): Ajv {
    const draft = schemaDraft(schema);
    let ajv = this.#byDraft.get(draft);
    if (ajv === undefined) this.#byDraft.set(draft, (ajv = createAjv(draft)));
    return ajv;
  }
}

export function createSchemaCompiler(): SchemaCompiler {
  return new SchemaCompiler();
}
