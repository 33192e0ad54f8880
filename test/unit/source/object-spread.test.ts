import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * A source rule, checked as a test (the project has no linter): no object literal in `src` starts with
 * a spread followed by more properties (`{ ...a, b }`, `{ ...a, b: 1 }`). On Node 20's V8 that shape
 * runs on a slow path — about 0.6 µs per extra property instead of a few nanoseconds — and can leave
 * the new object in dictionary mode, which slows every later read of it. The event queue built each
 * entry that way, and the publisher spent 6.8 µs per event instead of 3.9 (bench/history/log-to-session-30.md, item 36).
 * Write `Object.assign({}, a, { b })` or a literal with every property instead; `{ ...a, ...b }` and
 * `{ a: 1, ...b }` are fast and allowed.
 */
const src = fileURLToPath(new URL('../../../src/', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The code without its comments (a comment may show the shape it warns against). */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ' ')).replace(/\/\/[^\n]*/g, '');
}

/** `{`, a spread of one expression, a comma, then a property that is not another spread. */
const LEADING_SPREAD = /\{\s*\.\.\.[^,{}()\n]+(?:\([^()\n]*\))?\s*,\s*(?!\.\.\.)[\w$'"[]/g;

describe('source rule: no spread followed by properties', () => {
  it('finds the shape it forbids (the rule can fail)', () => {
    const bad = ['{ ...a, b }', '{ ...a.b, c: 1 }', '{\n  ...extra,\n  messages: [] }', '{ ...f(x), y }'];
    const good = ['{ ...a }', '{ ...a, ...b }', '{ a: 1, ...b }', 'Object.assign({}, a, { b })', '[...a, b]'];
    expect(bad.map((text) => (text.match(LEADING_SPREAD) ?? []).length)).toEqual([1, 1, 1, 1]);
    expect(good.map((text) => (text.match(LEADING_SPREAD) ?? []).length)).toEqual([0, 0, 0, 0, 0]);
  });

  it('holds for every file of src', () => {
    const found = sourceFiles(src).flatMap((file) => {
      const code = withoutComments(readFileSync(file, 'utf8'));
      return [...code.matchAll(LEADING_SPREAD)].map((match) => `${relative(src, file)}:${code.slice(0, match.index).split('\n').length}: ${match[0].replace(/\s+/g, ' ')}`);
    });
    expect(found).toEqual([]);
  });
});
