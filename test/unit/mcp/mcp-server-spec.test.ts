import { describe, expect, it } from 'vitest';
import { ConfigInvalidError } from '../../../src/core/errors/index.js';
import { McpServerSpecSchema, parseMcpServerSpec } from '../../../src/mcp/index.js';

function refusal(value: unknown): ConfigInvalidError {
  try {
    parseMcpServerSpec(value, 3);
  } catch (error) {
    if (error instanceof ConfigInvalidError) return error;
    throw error;
  }
  throw new Error('the spec was accepted');
}

describe('parseMcpServerSpec', () => {
  it('resolves a stdio spec with its defaults', () => {
    expect(parseMcpServerSpec({ mcp: { name: 'files', command: 'npx', args: ['-y', 'server'], env: { KEY: 'v' } } })).toEqual({
      transport: 'stdio',
      name: 'files',
      command: 'npx',
      args: ['-y', 'server'],
      env: { KEY: 'v' },
      optional: false,
      timeoutMs: 60_000,
    });
  });

  it('resolves an HTTP spec', () => {
    expect(parseMcpServerSpec({ mcp: { name: 'web-1', url: 'https://mcp.example.com/mcp', headers: { authorization: 'Bearer x' }, optional: true, timeoutMs: 5_000 } })).toEqual({
      transport: 'http',
      name: 'web-1',
      url: 'https://mcp.example.com/mcp',
      headers: { authorization: 'Bearer x' },
      optional: true,
      timeoutMs: 5_000,
    });
  });

  it.each([
    [{ mcp: { name: 'has space', command: 'x' } }, 'mcp.name'],
    [{ mcp: { name: 'n'.repeat(33), command: 'x' } }, 'mcp.name'],
    [{ mcp: { name: 'a', command: 'x', url: 'http://h/' } }, 'mcp'],
    [{ mcp: { name: 'a' } }, 'mcp'],
    [{ mcp: { name: 'a', command: '' } }, 'mcp.command'],
    [{ mcp: { name: 'a', command: 'x', timeoutMs: 0 } }, 'mcp.timeoutMs'],
    [{ mcp: { name: 'a', command: 'x', timeoutMs: 3_600_001 } }, 'mcp.timeoutMs'],
    [{ mcp: { name: 'a', url: 'ftp://h/' } }, 'mcp.url'],
    [{ mcp: { name: 'a', url: 'http://h/', header: {} } }, 'mcp.header'],
    [{ mcp: { name: 'a', command: 'x' }, extra: 1 }, 'extra'],
    ['files', 'mcp'],
  ])('refuses %j, naming %s', (value, field) => {
    const error = refusal(value);
    expect(error.details).toEqual({ field });
    expect(error.message).toContain(`MCP server spec #3`);
    expect(error.message).toContain(`: ${field}: `);
  });

  it('never quotes an env or header value', () => {
    const error = refusal({ mcp: { name: 'a', command: 'x', env: { KEY: 'sk-secret', NUM: 5 } } });
    expect(error.details).toEqual({ field: 'mcp.env.NUM' });
    expect(error.message).not.toContain('sk-secret');
  });

  it('exports a zod schema that accepts both kinds', () => {
    expect(McpServerSpecSchema.safeParse({ mcp: { name: 'a', command: 'x' } }).success).toBe(true);
    expect(McpServerSpecSchema.safeParse({ mcp: { name: 'a', url: 'http://127.0.0.1:1/mcp' } }).success).toBe(true);
    expect(McpServerSpecSchema.safeParse({ mcp: { name: 'a' } }).success).toBe(false);
  });
});
