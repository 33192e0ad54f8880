/**
 * Structured output for Anthropic, as an instruction in the system prompt.
 *
 * OpenAI takes `response_format: { type: 'json_schema' }`; the Anthropic Messages API has had no
 * equivalent in every API version and model (structured outputs arrived later, per model, and
 * Anthropic-compatible endpoints behind `ANTHROPIC_BASE_URL` often reject the parameter with a 400).
 * An unsupported parameter fails every call, whereas an instruction works everywhere — and the loop
 * validates the reply against the schema anyway (`parseStructured`, one corrective round), so the
 * instruction only has to make a valid reply likely, not certain.
 */
import type { ResponseFormatSpec } from '../../core/ports/llm.js';

/** The instruction for `format`: the schema's name, description and the schema itself. */
export function structuredOutputInstruction(format: ResponseFormatSpec): string {
  const description = format.description === undefined || format.description.trim() === '' ? '' : ` (${format.description.trim()})`;
  return [
    `Reply with a single JSON object that conforms to the JSON Schema "${format.name}"${description} below.`,
    'Output only the JSON object: no prose before or after it and no Markdown code fences.',
    '<json_schema>',
    JSON.stringify(format.schema),
    '</json_schema>',
  ].join('\n');
}

/** The system prompt with the instruction appended (after a blank line), or the prompt unchanged. */
export function withStructuredOutput(systemPrompt: string | null, format: ResponseFormatSpec | null): string | null {
  if (format === null) return systemPrompt;
  const instruction = structuredOutputInstruction(format);
  return systemPrompt === null || systemPrompt.trim() === '' ? instruction : `${systemPrompt}\n\n${instruction}`;
}
