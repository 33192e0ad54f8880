import { describe, expect, it } from 'vitest';
import { ToolRegistry } from '../../../../src/core/tools/index.js';
import { simpleTool } from './fixtures.js';

function registry(): ToolRegistry {
  return ToolRegistry.from([simpleTool('alpha', () => 'a'), simpleTool('beta', () => 'b', { concurrencySafe: true }), simpleTool('gamma', () => 'c')]);
}

describe('ToolRegistry', () => {
  it('looks tools up by name', () => {
    const tools = registry();
    expect(tools.names()).toEqual(['alpha', 'beta', 'gamma']);
    expect(tools.has('beta')).toBe(true);
    expect(tools.has('delta')).toBe(false);
    expect(tools.get('beta')?.concurrencySafe).toBe(true);
    expect(tools.get('delta')).toBeUndefined();
  });

  it('offers every tool, in registration order, without an allowlist', () => {
    expect(registry().specs().map((spec) => spec.name)).toEqual(['alpha', 'beta', 'gamma']);
    expect(registry().specs(null).map((spec) => spec.name)).toEqual(['alpha', 'beta', 'gamma']);
    expect(registry().specs()[0]).toEqual({ name: 'alpha', description: 'alpha tool', parameters: { type: 'object' } });
  });

  it('offers only allowed tools, in registration order, ignoring unknown names', () => {
    expect(registry().specs(['gamma', 'nope', 'alpha']).map((spec) => spec.name)).toEqual(['alpha', 'gamma']);
    expect(registry().specs([])).toEqual([]);
  });

  it('reports the allowlist names it does not know, once each, in allowlist order', () => {
    expect(registry().unknownNames(['zeta', 'alpha', 'eta', 'zeta'])).toEqual(['zeta', 'eta']);
    expect(registry().unknownNames(['alpha'])).toEqual([]);
    expect(registry().unknownNames(null)).toEqual([]);
  });

  it('subset returns a new registry and never changes the original', () => {
    const tools = registry();
    const narrowed = tools.subset(['gamma', 'alpha', 'unknown']);
    expect(narrowed).not.toBe(tools);
    expect(narrowed.names()).toEqual(['alpha', 'gamma']);
    expect(narrowed.has('beta')).toBe(false);
    expect(tools.names()).toEqual(['alpha', 'beta', 'gamma']);
    expect(tools.specs().map((spec) => spec.name)).toEqual(['alpha', 'beta', 'gamma']);
    expect(narrowed.subset(['gamma']).names()).toEqual(['gamma']);
    expect(narrowed.names()).toEqual(['alpha', 'gamma']);
    expect(tools.subset([]).names()).toEqual([]);
    expect(tools.subset(null).names()).toEqual(['alpha', 'beta', 'gamma']);
  });

  it('subset shares the compiled tools instead of recompiling them', () => {
    const tools = registry();
    expect(tools.subset(['alpha']).get('alpha')).toBe(tools.get('alpha'));
  });

  it('hands out specs that cannot be mutated', () => {
    const tools = registry();
    const [spec] = tools.specs();
    expect(() => {
      spec!.parameters['type'] = 'string';
    }).toThrow(TypeError);
    expect(tools.specs()[0]?.parameters['type']).toBe('object');
  });
});
