import { describe, expect, it } from 'vitest';
import { childResultPayload } from '../../../src/fleet/child-result.js';
import { childSessionId } from '../../../src/fleet/child-session-id.js';
import { assertNewSessionId } from '../../../src/fleet/session-id.js';
import type { InputResult } from '../../../src/core/session-types.js';

const usage = { promptTokens: 10, completionTokens: 5, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 15, llmCalls: 1 };

describe('child session ids', () => {
  it('are <parent>:sub:<toolCallId> when that is a valid new session id', () => {
    expect(childSessionId('chat-1', 'call_abc')).toBe('chat-1:sub:call_abc');
    expect(childSessionId('chat-1:sub:call_abc', 'toolu_01')).toBe('chat-1:sub:call_abc:sub:toolu_01');
  });

  it.each([
    ['too long', 'p'.repeat(120), 'call_1'],
    ['a character outside the alphabet', 'chat-1', 'call/1'],
    ['a reserved suffix', 'chat-1', 'x:seq'],
  ])('fall back to a fixed-length hash on %s, one per (parent, call)', (_case, parent, call) => {
    const id = childSessionId(parent, call);
    expect(id).toMatch(/^sub-[0-9a-f]{40}$/);
    expect(assertNewSessionId(id)).toBe(id);
    expect(childSessionId(parent, call)).toBe(id);
    expect(childSessionId(parent, `${call}x`)).not.toBe(id);
  });

  it('the hash keeps parent and call apart', () => {
    expect(childSessionId('a'.repeat(128), 'bc')).not.toBe(childSessionId(`${'a'.repeat(127)}`, 'abc'));
  });
});

describe('the result a child gives its parent', () => {
  const child = { sessionId: 'p:sub:c1', agent: 'reader', spawn: { inputSeq: 1, toolCallId: 'c1', wait: true } };
  const result = (fields: Partial<InputResult>): InputResult => Object.assign({ status: 'completed', finalText: 'the answer', rounds: 1, toolCalls: 0, usage }, fields) as InputResult;

  it('is the final text verbatim when the child completed', () => {
    expect(childResultPayload(child, result({}), null)).toEqual({
      toolCallId: 'c1', childSessionId: 'p:sub:c1', agent: 'reader', status: 'completed', text: 'the answer', errorCode: null, usage, wait: true,
    });
  });

  it('is the structured output as JSON text when it has one', () => {
    expect(childResultPayload(child, result({ output: { score: 3 } }), null)?.text).toBe('{"score":3}');
  });

  it('names the status and error code otherwise', () => {
    const failed = childResultPayload(child, result({ status: 'failed', finalText: '' }), { code: 'hook.failed', message: 'boom' });
    expect(failed).toMatchObject({ status: 'failed', text: '[sub-agent p:sub:c1 ended failed: hook.failed]', errorCode: 'hook.failed' });
    expect(childResultPayload(child, result({ status: 'hit_round_limit', finalText: '[hit_round_limit]\nsummary' }), null)?.text).toBe('[sub-agent p:sub:c1 ended hit_round_limit]');
  });

  it('is nothing while the child waits for a person', () => {
    expect(childResultPayload(child, result({ status: 'waiting_for_input' }), null)).toBeNull();
  });
});
