import { describe, expect, it } from 'vitest';
import { escapeControlCharactersInStrings, MAX_ARGUMENT_DEPTH, parseToolArguments } from '../../../../src/core/tools/index.js';

describe('parseToolArguments', () => {
  it('parses a JSON object', () => {
    expect(parseToolArguments('{"query":"cats","limit":3,"nested":{"a":[1]}}')).toEqual({
      ok: true,
      args: { query: 'cats', limit: 3, nested: { a: [1] } },
    });
  });

  it('accepts arguments nested MAX_ARGUMENT_DEPTH levels deep, and refuses one level more', () => {
    const nested = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
    expect(parseToolArguments(nested(MAX_ARGUMENT_DEPTH)).ok).toBe(true);
    expect(parseToolArguments(nested(MAX_ARGUMENT_DEPTH + 1))).toEqual({ ok: false, reason: `arguments nest arrays and objects deeper than ${MAX_ARGUMENT_DEPTH} levels` });
    // Measured without recursion: far deeper text is refused, not a stack overflow.
    expect(parseToolArguments(`{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`).ok).toBe(false);
  });

  it.each(['', '   ', '\n\t '])('treats blank text %j as no arguments', (raw) => {
    expect(parseToolArguments(raw)).toEqual({ ok: true, args: {} });
  });

  it('repairs raw newlines, carriage returns and tabs inside strings', () => {
    const raw = '{"path": "a.txt", "content": "line 1\nline 2\r\n\tindented"}';
    expect(() => JSON.parse(raw)).toThrow();
    expect(parseToolArguments(raw)).toEqual({ ok: true, args: { path: 'a.txt', content: 'line 1\nline 2\r\n\tindented' } });
  });

  it('repairs only inside strings, so pretty-printed JSON with a raw newline in a value still parses', () => {
    const raw = '{\n  "content": "a\nb",\n\t"escaped": "q\\"\n"\n}';
    expect(parseToolArguments(raw)).toEqual({ ok: true, args: { content: 'a\nb', escaped: 'q"\n' } });
  });

  it.each([
    ['an unterminated string', '{"a": "b'],
    ['an unclosed object', '{"a": 1'],
    ['a cut-off string holding a raw newline', '{"path": "f.txt", "content": "line 1\nline'],
    ['a missing value', '{"a": }'],
    ['plain text', 'search for cats'],
  ])('never repairs %s', (_label, raw) => {
    const parsed = parseToolArguments(raw);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toMatch(/^arguments are not valid JSON \(.+\); send the complete arguments object again$/);
  });

  it('reports the parse error of the text the model sent', () => {
    const parsed = parseToolArguments('{"a": "b');
    expect(parsed).toEqual({ ok: false, reason: expect.stringContaining('Unterminated string') });
  });

  it.each([
    ['[1, 2]', 'an array'],
    ['42', 'a number'],
    ['"text"', 'a string'],
    ['true', 'a boolean'],
    ['null', 'null'],
  ])('rejects %s, which is not an object', (raw, kind) => {
    expect(parseToolArguments(raw)).toEqual({ ok: false, reason: `arguments must be a JSON object, got ${kind}` });
  });
});

describe('escapeControlCharactersInStrings', () => {
  it('escapes inside strings, tracks escaped quotes and backslashes, leaves the rest', () => {
    expect(escapeControlCharactersInStrings('{\n"a":"x\ty",\n"b":"\\\\"\n,"c":"\\"\n"}')).toBe('{\n"a":"x\\ty",\n"b":"\\\\"\n,"c":"\\"\\n"}');
  });
});
