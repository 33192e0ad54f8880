/** Structured output: the JSON repair chain and full JSON Schema validation of the reply. */
export { balancedObjects, extractJsonObject, withoutTrailingCommas, type ExtractResult } from './extract-json.js';
export {
  parseStructured,
  toOutputInvalidError,
  type StructuredFailureReason,
  type StructuredResult,
} from './parse-structured.js';
export {
  compileResponseFormat,
  formatSchemaErrors,
  type ResponseFormat,
  type StructuredValidator,
} from './validate-structured.js';
