import { describe, expect, it } from 'vitest';
import type { FinishReason } from '../../../../src/core/ports/llm.js';
import { mapFinishReason } from '../../../../src/llm/openai/map-finish-reason.js';

describe('mapFinishReason', () => {
  const cases: [string | null, FinishReason][] = [
    ['stop', 'stop'],
    ['tool_calls', 'tool_calls'],
    ['function_call', 'tool_calls'],
    ['length', 'length'],
    ['content_filter', 'content_filter'],
    ['eos', 'other'],
    ['insufficient_system_resource', 'other'],
    ['', 'other'],
    [null, 'other'],
  ];
  it.each(cases)('%s → %s', (raw, unified) => {
    expect(mapFinishReason(raw)).toBe(unified);
  });
});
