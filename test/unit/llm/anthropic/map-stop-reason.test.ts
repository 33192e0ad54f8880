import { describe, expect, it } from 'vitest';
import { mapStopReason } from '../../../../src/llm/anthropic/index.js';

describe('mapStopReason', () => {
  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['tool_use', 'tool_calls'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['refusal', 'content_filter'],
    ['pause_turn', 'other'],
    ['something_new', 'other'],
    ['constructor', 'other'],
  ])('%s → %s, raw kept', (raw, unified) => {
    expect(mapStopReason(raw)).toEqual({ finishReason: unified, rawFinishReason: raw });
  });

  it.each([null, undefined, ''])('%s → other with no raw reason', (raw) => {
    expect(mapStopReason(raw)).toEqual({ finishReason: 'other', rawFinishReason: null });
  });
});
