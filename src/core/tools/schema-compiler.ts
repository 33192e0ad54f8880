import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';

/** ajv-formats is CommonJS; under NodeNext its plugin is the default import's `default`. */
const addFormats = addFormatsModule.default;

/**
 * A fresh ajv instance configured for tool argument schemas. Each registry owns its own (no
 * module-level mutable state: ajv caches compiled schemas inside the instance).
 *
 * - `allErrors`: the model gets every problem at once, not one per round trip.
 * - `strict: false`: user schemas often carry keywords ajv does not know (`examples`, vendor `x-…`);
 *   those are ignored, but a schema that cannot compile (bad `type`, unresolvable `$ref`) still throws.
 * - `logger: false`: core code never writes to the console.
 * - ajv-formats: `date-time`, `email`, `uri`, `uuid` … are checked, not ignored.
 */
export function createSchemaCompiler(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, logger: false });
  addFormats(ajv);
  return ajv;
}
