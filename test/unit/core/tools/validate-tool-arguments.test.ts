import { Ajv } from 'ajv';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ToolRegistry, type RegisteredTool } from '../../../../src/core/tools/index.js';
import { simpleTool } from './fixtures.js';

const searchParameters = {
  type: 'object',
  properties: {
    query: { type: 'string' },
    limit: { type: 'integer', maximum: 50 },
    sort: { type: 'string', enum: ['relevance', 'date'] },
    since: { type: 'string', format: 'date-time' },
    filter: { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } } } },
  },
  required: ['query'],
  additionalProperties: false,
};

function search(): RegisteredTool {
  return ToolRegistry.from([simpleTool('search', () => 'ok', { parameters: searchParameters })]).get('search')!;
}

describe('tool argument validation', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('accepts arguments that match the schema', () => {
    const args = { query: 'cats', limit: 50, sort: 'date', since: '2025-01-02T03:04:05Z', filter: { tags: ['a'] } };
    expect(search().checkArguments(args)).toEqual({ ok: true });
  });

  it('lists every error with its JSON pointer, root errors without one', () => {
    expect(search().checkArguments({ limit: 51 })).toEqual({
      ok: false,
      message: `invalid arguments for tool "search": must have required property 'query'; /limit must be <= 50`,
    });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a wrong type', { query: 5 }, '/query must be string'],
    ['a non-integer', { query: 'q', limit: 2.5 }, '/limit must be integer'],
    ['a value outside the enum', { query: 'q', sort: 'random' }, '/sort must be equal to one of the allowed values: "relevance", "date"'],
    ['an extra property', { query: 'q', page: 2 }, 'must NOT have additional properties (found "page")'],
    ['a bad date-time', { query: 'q', since: 'yesterday' }, '/since must match format "date-time"'],
    ['a nested wrong type', { query: 'q', filter: { tags: ['ok', 3] } }, '/filter/tags/1 must be string'],
  ])('reports %s', (_label, args, expected) => {
    const check = search().checkArguments(args);
    expect(check.ok).toBe(false);
    if (!check.ok) {
      expect(check.message).toMatch(/^invalid arguments for tool "search": /);
      expect(check.message).toContain(expected);
    }
  });

  it('reports all errors, not just the first', () => {
    const check = search().checkArguments({ query: 1, sort: 'x', since: 'y', extra: true });
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.message.split('; ')).toHaveLength(4);
  });

  it('caps a long error list', () => {
    const tool = ToolRegistry.from([
      simpleTool('many', () => 'ok', { parameters: { type: 'object', additionalProperties: { type: 'string' } } }),
    ]).get('many')!;
    const args = Object.fromEntries(Array.from({ length: 25 }, (_, index) => [`k${index}`, index]));
    const check = tool.checkArguments(args);
    expect(check.ok).toBe(false);
    if (!check.ok) {
      expect(check.message.split('; ')).toHaveLength(21);
      expect(check.message).toMatch(/; … and 5 more$/);
    }
  });

  it('compiles each schema once, when the registry is built', () => {
    const compile = vi.spyOn(Ajv.prototype, 'compile');
    const tools = ToolRegistry.from([simpleTool('a', () => 1), simpleTool('b', () => 2)]);
    expect(compile).toHaveBeenCalledTimes(2);
    for (let i = 0; i < 3; i += 1) tools.get('a')!.checkArguments({});
    tools.subset(['b']).get('b')!.checkArguments({});
    expect(compile).toHaveBeenCalledTimes(2);
  });

  it('gives each registry its own compiler, so an $id in one does not clash with another', () => {
    const withId = (name: string) => simpleTool(name, () => 1, { parameters: { $id: 'https://example.com/args.json', type: 'object' } });
    expect(() => ToolRegistry.from([withId('a')])).not.toThrow();
    expect(() => ToolRegistry.from([withId('a')])).not.toThrow();
    expect(() => ToolRegistry.from([withId('a'), withId('b')])).toThrow(/invalid tool "b": parameters is not a valid JSON Schema: .*already exists/);
  });
});
