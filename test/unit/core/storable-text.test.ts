import { describe, expect, it } from 'vitest';
import { storable, storableText } from '../../../src/core/storable-text.js';

describe('storableText', () => {
  it('replaces NUL and unpaired surrogates with U+FFFD, and keeps pairs', () => {
    expect(storableText('a\u0000b')).toBe('a\uFFFDb');
    expect(storableText('\ud800x\udc00')).toBe('\uFFFDx\uFFFD');
    expect(storableText('emoji 😀 ok')).toBe('emoji 😀 ok');
    expect(storableText('cut \ud83d')).toBe('cut \uFFFD');
  });

  it('returns the same string when nothing needs replacing', () => {
    const text = 'plain text';
    expect(storableText(text)).toBe(text);
  });
});

describe('storable', () => {
  it('fixes strings at any depth, keys included, copying only what changed', () => {
    const clean = { keep: ['x'] };
    const value = { a: ['ok', 'n\u0000'], clean, nested: { ['k\ud800']: 1 }, n: 1, flag: true, none: null };
    const fixed = storable(value);
    expect(fixed).toEqual({ a: ['ok', 'n\uFFFD'], clean: { keep: ['x'] }, nested: { ['k\uFFFD']: 1 }, n: 1, flag: true, none: null });
    expect(fixed.clean).toBe(clean);
    expect(value.a[1]).toBe('n\u0000');
  });

  it('keeps an own __proto__ key (as JSON.parse makes it) a key of the copy, not its prototype', () => {
    const fixed = storable(JSON.parse('{"__proto__":{"polluted":1},"x":"a\\u0000b"}') as Record<string, unknown>);
    expect(Object.getPrototypeOf(fixed)).toBe(Object.prototype);
    expect(Object.keys(fixed)).toEqual(['__proto__', 'x']);
    expect(JSON.stringify(fixed)).toBe('{"__proto__":{"polluted":1},"x":"a\uFFFDb"}');
    const nested = storable(JSON.parse('{"__proto__":{"a":"\\u0000"}}') as Record<string, unknown>);
    expect(JSON.stringify(nested)).toBe('{"__proto__":{"a":"\uFFFD"}}');
  });

  it('returns the same object when nothing needs replacing, and leaves non-plain objects alone', () => {
    const value = { a: [{ b: 'c' }], at: new Date(0) };
    expect(storable(value)).toBe(value);
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { t: 'x\u0000' });
    expect(storable(bare)).toEqual({ t: 'x\uFFFD' });
  });
});
