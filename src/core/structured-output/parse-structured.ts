/**
 * A model's reply to a structured-output request, turned into a validated object or a typed reason it
 * could not be. The loop uses the reason to decide what to tell the model or the
 * caller; `toOutputInvalidError` gives the typed error when it gives up.
 */
import { OutputInvalidError } from '../errors/index.js';
import { extractJsonObject } from './extract-json.js';
import type { StructuredValidator } from './validate-structured.js';

/** Why a reply was not usable: nothing like JSON, broken JSON, JSON that is not an object, or a schema mismatch. */
export type StructuredFailureReason = 'no_json' | 'invalid_json' | 'not_object' | 'schema';

/** The outcome of {@link parseStructured}. */
export type StructuredResult =
  | { ok: true; value: Record<string, unknown> }
  | { ok: false; reason: StructuredFailureReason; message: string };

/** The longest part of a bad reply kept in an error's details (power-loop keeps 1000 chars). */
const RAW_TEXT_LIMIT = 1000;

/**
 * Extracts the JSON object from `text` with the repair chain (whole text → fenced block →
 * brace-balanced object → trailing commas removed), then validates it against the response format
 * when a validator is given.
 */
export function parseStructured(text: string, validator?: StructuredValidator): StructuredResult {
  const extracted = extractJsonObject(text);
  if (!extracted.ok) return extracted;
  if (validator === undefined) return extracted;
  const verdict = validator.validate(extracted.value);
  if (verdict.ok) return extracted;
  return { ok: false, reason: 'schema', message: `does not match "${validator.format.name}": ${verdict.message}` };
}

/** The typed error (`output.invalid`, a model fault) for a reply the loop gives up on. */
export function toOutputInvalidError(failure: Extract<StructuredResult, { ok: false }>, rawText: string): OutputInvalidError {
  return new OutputInvalidError(`structured output invalid (${failure.reason}): ${failure.message}`, {
    details: { reason: failure.reason, rawText: rawText.slice(0, RAW_TEXT_LIMIT) },
  });
}
