import { describe, expect, it } from 'vitest';
import {
  balancedObjects,
  compileResponseFormat,
  extractJsonObject,
  parseStructured,
  toOutputInvalidError,
  withoutTrailingCommas,
} from '../../../../src/core/structured-output/index.js';

describe('the JSON repair chain', () => {
  const ok: [string, string, Record<string, unknown>][] = [
    ['plain JSON', '{"a": 1}', { a: 1 }],
    ['JSON with surrounding whitespace', '\n  {"a": 1}\n', { a: 1 }],
    ['a ```json fence', 'Here you go:\n```json\n{"a": 1}\n```\nAnything else?', { a: 1 }],
    ['a bare ``` fence', '```\n{"a": [1, 2]}\n```', { a: [1, 2] }],
    ['a fence on one line', '```json {"a": 1} ```', { a: 1 }],
    ['an unclosed fence', '```json\n{"a": 1}', { a: 1 }],
    ['an object inside prose', 'Sure! The answer is {"a": 1} — hope that helps.', { a: 1 }],
    ['prose with an apostrophe before the object', "Here's the JSON: {\"a\": \"it's\"}", { a: "it's" }],
    ['braces inside strings', 'Result: {"code": "if (x) { y(); }", "n": 2} end', { code: 'if (x) { y(); }', n: 2 }],
    ['escaped quotes inside strings', 'x {"q": "she said \\"}\\" loudly"} y', { q: 'she said "}" loudly' }],
    ['a stray } before the object', 'oops } then {"a": 1}', { a: 1 }],
    ['a brace group that is not JSON before the real one', 'use {braces} like {"a": 1}', { a: 1 }],
    ['nested objects', 'pre {"a": {"b": {"c": 1}}} post', { a: { b: { c: 1 } } }],
    ['a trailing comma in an object', '{"a": 1, "b": 2,}', { a: 1, b: 2 }],
    ['a trailing comma in an array', '{"a": [1, 2, ],}', { a: [1, 2] }],
    ['a trailing comma inside a fence in prose', 'ok ```json\n{"a": 1,\n}\n``` done', { a: 1 }],
    ['a trailing-comma lookalike inside a string', '{"a": ",}", "b": [",]"],}', { a: ',}', b: [',]'] }],
    ['the first of two objects', '{"a": 1} and {"b": 2}', { a: 1 }],
  ];
  it.each(ok)('extracts %s', (_name, text, expected) => {
    expect(extractJsonObject(text)).toEqual({ ok: true, value: expected });
  });

  const failures: [string, string, string][] = [
    ['an empty reply', '', 'no_json'],
    ['whitespace', '  \n ', 'no_json'],
    ['prose only', 'I cannot help with that.', 'no_json'],
    ['a truncated object (never completed)', '{"a": 1, "b": [1, 2', 'invalid_json'],
    ['broken JSON', '{a: 1}', 'invalid_json'],
    ['a JSON array', '[{"a": 1}]', 'not_object'],
    ['a JSON string', '"hello"', 'not_object'],
    ['a JSON number', '42', 'not_object'],
    ['JSON null', 'null', 'not_object'],
    ['a fenced array', '```json\n[1, 2]\n```', 'not_object'],
    ['an array of objects (not unwrapped)', '[{"a": 1}, {"a": 2}]', 'not_object'],
  ];
  it.each(failures)('reports %s (%j) as %s', (_name, text, reason) => {
    const result = extractJsonObject(text);
    expect(result).toMatchObject({ ok: false, reason });
    if (!result.ok) expect(result.message.length).toBeGreaterThan(0);
  });

  it('finds brace-balanced candidates left to right, string-aware', () => {
    expect([...balancedObjects('a {"x": "}"} b {c} {')]).toEqual(['{"x": "}"}', '{c}']);
  });

  it('removes trailing commas only outside strings', () => {
    expect(withoutTrailingCommas('{"a": [1,2,], "b": ",}",\n}')).toBe('{"a": [1,2], "b": ",}"\n}');
  });

  it('stays bounded on long prose full of braces', () => {
    const text = '{'.repeat(5000) + ' no closing';
    expect(extractJsonObject(text)).toMatchObject({ ok: false, reason: 'invalid_json' });
  });
});

describe('parseStructured', () => {
  const validator = compileResponseFormat({
    name: 'person',
    schema: {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1 },
        age: { type: 'integer', minimum: 0 },
        email: { type: 'string', format: 'email' },
        tags: { type: 'array', items: { type: 'string' } },
      },
      required: ['name', 'age'],
      additionalProperties: false,
    },
  });

  it('returns the object when it matches the schema', () => {
    expect(parseStructured('```json\n{"name": "Ada", "age": 36, "tags": ["x"],}\n```', validator)).toEqual({
      ok: true,
      value: { name: 'Ada', age: 36, tags: ['x'] },
    });
  });

  it('returns the object without a validator', () => {
    expect(parseStructured('{"anything": true}')).toEqual({ ok: true, value: { anything: true } });
  });

  it('reports every schema error with its path', () => {
    const result = parseStructured('{"age": -1.5, "email": "nope", "tags": [1], "extra": 1}', validator);
    expect(result).toMatchObject({ ok: false, reason: 'schema' });
    if (result.ok) return;
    expect(result.message).toContain('"person"');
    expect(result.message).toContain("(root) must have required property 'name'");
    expect(result.message).toContain("(root) must NOT have additional properties 'extra'");
    expect(result.message).toContain('/age must be integer');
    expect(result.message).toContain('/age must be >= 0');
    expect(result.message).toContain('/email must match format "email"');
    expect(result.message).toContain('/tags/0 must be string');
  });

  it('reports extraction failures before validation', () => {
    expect(parseStructured('no json here', validator)).toMatchObject({ ok: false, reason: 'no_json' });
    expect(parseStructured('[1]', validator)).toMatchObject({ ok: false, reason: 'not_object' });
    expect(parseStructured('{"name": ', validator)).toMatchObject({ ok: false, reason: 'invalid_json' });
  });

  it('converts a failure into a typed output.invalid error with the raw text clipped', () => {
    const raw = 'x'.repeat(5000);
    const result = parseStructured(raw, validator);
    if (result.ok) throw new Error('expected a failure');
    const error = toOutputInvalidError(result, raw);
    expect(error.code).toBe('output.invalid');
    expect(error.fault).toBe('model');
    expect(error.details).toMatchObject({ reason: 'no_json' });
    expect((error.details.rawText as string).length).toBe(1000);
  });
});

describe('compileResponseFormat', () => {
  it('supports draft 2020-12 schemas', () => {
    const validator = compileResponseFormat({
      name: 'pair',
      schema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false } },
        required: ['pair'],
      },
    });
    expect(parseStructured('{"pair": ["a", 1]}', validator).ok).toBe(true);
    expect(parseStructured('{"pair": ["a", 1, 2]}', validator)).toMatchObject({ ok: false, reason: 'schema' });
  });

  it('resolves local $refs', () => {
    const validator = compileResponseFormat({
      name: 'tree',
      schema: {
        type: 'object',
        definitions: { leaf: { type: 'object', properties: { v: { type: 'number' } }, required: ['v'] } },
        properties: { leaf: { $ref: '#/definitions/leaf' } },
        required: ['leaf'],
      },
    });
    expect(parseStructured('{"leaf": {"v": 1}}', validator).ok).toBe(true);
    expect(parseStructured('{"leaf": {}}', validator)).toMatchObject({ ok: false, reason: 'schema' });
  });

  it('ignores provider-specific keywords instead of refusing them', () => {
    expect(() => compileResponseFormat({ name: 'x', schema: { type: 'object', 'x-vendor': 1, strict: true } })).not.toThrow();
  });

  it.each([
    ['a bad name', { name: 'has space', schema: { type: 'object' } }, /name/],
    ['an empty name', { name: '', schema: { type: 'object' } }, /name/],
    ['a root that is not an object', { name: 'x', schema: { type: 'array' } }, /root must be an object/],
    ['an invalid schema', { name: 'x', schema: { type: 'object', properties: { a: { type: 'nonsense' } } } }, /invalid JSON Schema/],
    ['an unresolvable $ref', { name: 'x', schema: { type: 'object', properties: { a: { $ref: '#/nowhere' } } } }, /invalid JSON Schema/],
  ])('refuses %s with input.invalid', (_name, format, pattern) => {
    expect(() => compileResponseFormat(format)).toThrow(pattern);
    expect(() => compileResponseFormat(format)).toThrow(expect.objectContaining({ code: 'input.invalid' }));
  });
});
