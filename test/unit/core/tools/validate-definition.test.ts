import { describe, expect, it } from 'vitest';
import { ToolDefinitionError } from '../../../../src/core/errors/index.js';
import {
  DEFAULT_TOOL_TIMEOUT_MS,
  ToolRegistry,
  defineTool,
  validateToolDefinition,
  type AnyToolDefinition,
} from '../../../../src/core/tools/index.js';

function valid(): Record<string, unknown> {
  return {
    name: 'search',
    description: 'Search the docs',
    parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
    execute: () => 'ok',
  };
}

function rejection(definition: unknown, index?: number): ToolDefinitionError {
  try {
    validateToolDefinition(definition, index === undefined ? {} : { index });
  } catch (error) {
    expect(error).toBeInstanceOf(ToolDefinitionError);
    return error as ToolDefinitionError;
  }
  throw new Error('expected a ToolDefinitionError');
}

describe('validateToolDefinition', () => {
  it('refuses an asynchronous schema ($async): its validator answers with a promise, which would pass every call', () => {
    const error = rejection({ ...valid(), parameters: { $async: true, type: 'object', properties: { query: { type: 'string' } } } });
    expect(error.code).toBe('tool.definition_invalid');
    expect(error.message).toMatch(/asynchronous schema \(\$async\) is not supported/);
  });

  it('resolves defaults: policy retry, not concurrency-safe, 60 s timeout', () => {
    const tool = validateToolDefinition(valid());
    expect(tool).toMatchObject({ name: 'search', policy: 'retry', concurrencySafe: false, timeoutMs: DEFAULT_TOOL_TIMEOUT_MS });
    expect(DEFAULT_TOOL_TIMEOUT_MS).toBe(60_000);
    expect(tool.spec).toEqual({ name: 'search', description: 'Search the docs', parameters: valid()['parameters'] });
  });

  it('keeps declared policy, concurrencySafe and timeoutMs, up to one hour', () => {
    const tool = validateToolDefinition({ ...valid(), policy: 'fail', concurrencySafe: true, timeoutMs: 3_600_000 });
    expect(tool).toMatchObject({ policy: 'fail', concurrencySafe: true, timeoutMs: 3_600_000 });
  });

  it.each(['a', 'A-b_c9', 'x'.repeat(64)])('accepts the name %s', (name) => {
    expect(validateToolDefinition({ ...valid(), name }).name).toBe(name);
  });

  it('validates a 2020-12 schema as 2020-12 (zod 4 toJSONSchema, MCP): a tuple with prefixItems', () => {
    // What zod 4's z.toJSONSchema(z.object({ query: z.string(), point: z.tuple([z.number(), z.number()]) })) gives.
    const parameters = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        query: { type: 'string' },
        point: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }], items: false },
      },
      required: ['query', 'point'],
      additionalProperties: false,
    };
    const tool = validateToolDefinition({ ...valid(), parameters });
    expect(tool.checkArguments({ query: 'a', point: [1, 2] })).toEqual({ ok: true });
    expect(tool.checkArguments({ query: 'a', point: [1, 2, 3] })).toMatchObject({ ok: false, message: expect.stringContaining('/point') });
    expect(tool.checkArguments({ query: 'a', point: ['x', 2] })).toMatchObject({ ok: false, message: expect.stringContaining('/point/0 must be number') });
  });

  it('validates a 2019-09 schema as 2019-09, and one that declares no draft as draft-07', () => {
    const nested = { type: 'object', properties: { a: { type: 'string' } }, unevaluatedProperties: false };
    const v2019 = validateToolDefinition({ ...valid(), parameters: Object.assign({ $schema: 'https://json-schema.org/draft/2019-09/schema' }, nested) });
    expect(v2019.checkArguments({ a: 'x', b: 1 })).toMatchObject({ ok: false });
    // Draft-07 has no unevaluatedProperties: ignored (strict off), so the extra property passes.
    expect(validateToolDefinition({ ...valid(), parameters: nested }).checkArguments({ a: 'x', b: 1 })).toEqual({ ok: true });
    // Draft-07's tuple form still works where no draft is declared.
    const tuple = { type: 'object', properties: { p: { type: 'array', items: [{ type: 'number' }], additionalItems: false } } };
    expect(validateToolDefinition({ ...valid(), parameters: tuple }).checkArguments({ p: [1, 2] })).toMatchObject({ ok: false });
  });

  it('ignores keywords ajv does not know, such as examples', () => {
    const parameters = { type: 'object', properties: { q: { type: 'string', examples: ['x'] } }, 'x-vendor': true };
    expect(validateToolDefinition({ ...valid(), parameters }).checkArguments({ q: 'a' })).toEqual({ ok: true });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a name with a space', { name: 'web search' }, 'name must be 1–64 characters'],
    ['a 65-character name', { name: 'x'.repeat(65) }, 'name must be 1–64 characters'],
    ['an empty name', { name: '' }, 'name must be 1–64 characters'],
    ['a name with a dot', { name: 'a.b' }, 'name must be 1–64 characters'],
    ['a numeric name', { name: 42 }, 'name must be 1–64 characters of letters, digits, "_" or "-", got 42'],
    ['no description', { description: undefined }, 'description must be a string, got undefined'],
    ['no parameters', { parameters: undefined }, 'parameters must be a JSON Schema object, got undefined'],
    ['array parameters', { parameters: [] }, 'parameters must be a JSON Schema object, got an array'],
    ['parameters not of type object', { parameters: { type: 'string' } }, 'parameters must describe an object (type: "object"), got type "string"'],
    ['parameters without a type', { parameters: { properties: {} } }, 'got type undefined'],
    ['a schema with an unknown type', { parameters: { type: 'object', properties: { a: { type: 'nope' } } } }, 'parameters is not a valid JSON Schema'],
    ['a schema with a bad keyword value', { parameters: { type: 'object', properties: { a: { minLength: 'x' } } } }, 'minLength must be integer'],
    ['a schema with an unresolvable $ref', { parameters: { type: 'object', properties: { a: { $ref: '#/defs/missing' } } } }, "can't resolve reference"],
    ['parameters that are not JSON data', { parameters: { type: 'object', default: () => 1 } }, 'parameters must be plain JSON data'],
    ['no execute', { execute: undefined }, 'execute must be a function, got undefined'],
    ['a string execute', { execute: 'run' }, 'execute must be a function, got string'],
    ['an unknown policy', { policy: 'sometimes' }, 'policy must be "retry" or "fail", got "sometimes"'],
    ['a zero timeout', { timeoutMs: 0 }, 'timeoutMs must be a positive integer of at most 3600000 (milliseconds), got 0'],
    ['a negative timeout', { timeoutMs: -5 }, 'got -5'],
    ['a fractional timeout', { timeoutMs: 1.5 }, 'got 1.5'],
    ['a timeout over one hour', { timeoutMs: 3_600_001 }, 'got 3600001'],
    ['a string timeout', { timeoutMs: '100' }, 'timeoutMs must be a positive integer'],
    ['a string concurrencySafe', { concurrencySafe: 'yes' }, 'concurrencySafe must be a boolean, got string'],
  ])('rejects %s', (_label, patch, problem) => {
    const error = rejection({ ...valid(), ...patch });
    expect(error.code).toBe('tool.definition_invalid');
    expect(error.message).toContain(problem);
    expect(error.message).toMatch(/^invalid tool/);
  });

  it('names the tool and lists every problem at once', () => {
    const error = rejection({ ...valid(), policy: 'never', timeoutMs: 0, execute: null });
    expect(error.message).toMatch(/^invalid tool "search": /);
    expect(error.details['problems']).toHaveLength(3);
    expect(error.message).toContain('execute must be a function, got null');
    expect(error.message).toContain('policy must be');
    expect(error.message).toContain('timeoutMs must be');
  });

  it('names a definition without a usable name by its position', () => {
    expect(rejection(null, 3).message).toBe('invalid tool definition #3: a tool definition must be an object, got null');
    expect(rejection({ ...valid(), name: undefined }, 1).message).toMatch(/^invalid tool definition #1: name must be/);
    expect(rejection('search').message).toMatch(/^invalid tool definition: a tool definition must be an object, got string/);
  });

  it('keeps its own frozen copy of the schema', () => {
    const definition = valid();
    const tool = validateToolDefinition(definition);
    (definition['parameters'] as { required: string[] }).required.push('other');
    expect(tool.spec.parameters['required']).toEqual(['query']);
    expect(tool.checkArguments({ query: 'x' })).toEqual({ ok: true });
    expect(Object.isFrozen(tool.spec.parameters['properties'])).toBe(true);
  });
});

describe('ToolRegistry.from', () => {
  it('rejects duplicate names, naming both positions', () => {
    const build = () => ToolRegistry.from([valid(), { ...valid(), name: 'other' }, valid()] as unknown as AnyToolDefinition[]);
    expect(build).toThrow(ToolDefinitionError);
    expect(build).toThrow('duplicate tool name "search" (definitions #0 and #2)');
  });

  it('rejects the first bad definition with its position', () => {
    const build = () => ToolRegistry.from([valid(), { ...valid(), name: 'b', execute: 1 }] as unknown as AnyToolDefinition[]);
    expect(build).toThrow('invalid tool "b": execute must be a function, got number');
  });

  it('rejects a tools module whose export is not an array', () => {
    expect(() => ToolRegistry.from({ search: valid() } as unknown as AnyToolDefinition[])).toThrow(
      'tools must be an array of tool definitions, got object',
    );
  });
});

describe('defineTool', () => {
  it('returns the definition itself, typed', () => {
    const definition = defineTool<{ query: string }>({
      name: 'search',
      description: 'd',
      parameters: { type: 'object', properties: { query: { type: 'string' } } },
      execute: (args) => args.query.toUpperCase(),
    });
    expect(ToolRegistry.from([definition]).get('search')?.execute({ query: 'abc' }, {} as never)).toBe('ABC');
    expect(defineTool(definition)).toBe(definition);
  });

  it('calls execute with the definition as this', () => {
    const definition = { ...valid(), prefix: '>', execute(this: { prefix: string }) { return `${this.prefix}ok`; } };
    expect(validateToolDefinition(definition).execute({}, {} as never)).toBe('>ok');
  });
});
