import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/** What the test tools need from their host: a folder for the marks `hang_once` leaves. */
export interface TestToolsOptions {
  stateDir: string;
}

/** A 1×1 PNG, base64: an image part of a known size (70 bytes). */
const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** 60 characters: with a server's prefix (`srv__`) past the providers' 64. */
export const LONG_TOOL_NAME = 'n'.repeat(60);

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

/**
 * A real MCP server (the SDK's McpServer) with the tools the tests of src/mcp call: each shows one
 * behaviour (joined text, `_meta`, a hang, an error, a list change, a call cut short by a kill).
 */
export function createTestMcpServer(options: TestToolsOptions): McpServer {
  const server = new McpServer({ name: 'loopfleet-test', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Says the text back.', inputSchema: { text: z.string() }, annotations: { idempotentHint: true, readOnlyHint: true } },
    ({ text: said }) => text(said),
  );
  server.registerTool('parts', { description: 'Answers with several parts.' }, () => ({
    content: [
      { type: 'text', text: 'first line' },
      { type: 'text', text: 'second line' },
      { type: 'image', data: PNG_1X1, mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'test://note', mimeType: 'text/plain', text: 'embedded note' } },
      { type: 'resource_link', uri: 'test://linked', name: 'linked' },
    ],
  }));
  server.registerTool('meta', { description: 'Tells the request _meta it got.' }, (extra) => text(JSON.stringify(extra._meta ?? {})));
  server.registerTool('pid', { description: 'Tells its process id.' }, () => text(String(process.pid)));
  server.registerTool('env', { description: 'Tells an environment variable.', inputSchema: { name: z.string() } }, ({ name }) => text(process.env[name] ?? '(unset)'));
  server.registerTool('fails', { description: 'Reports an error.' }, () => ({ isError: true, content: [{ type: 'text', text: 'the disk is full' }] }));
  server.registerTool('hang', { description: 'Never answers until cancelled.' }, (extra) => new Promise<CallToolResult>((resolve) => extra.signal.addEventListener('abort', () => resolve(text('cancelled')))));
  server.registerTool('add_tool', { description: 'Adds the tool "added".' }, () => {
    server.registerTool('added', { description: 'Added at run time.' }, () => text('added here'));
    return text('ok');
  });
  server.registerTool(LONG_TOOL_NAME, { description: 'Its offered name would be too long.' }, () => text('unreachable'));
  const hangOnce = hangOnceHandler(options.stateDir);
  server.registerTool('hang_once_idem', { description: 'Hangs the first time per key, then answers.', annotations: { idempotentHint: true } }, hangOnce);
  server.registerTool('hang_once', { description: 'Hangs the first time per key, then answers.' }, hangOnce);
  return server;
}

/**
 * The first call with an idempotency key leaves a mark `started-<key>` and never answers (the test kills
 * the process); a call whose mark is there answers `done <key>`.
 */
function hangOnceHandler(stateDir: string) {
  return (extra: { _meta?: Record<string, unknown> }): Promise<CallToolResult> | CallToolResult => {
    const key = String(extra._meta?.['loopfleet/idempotencyKey'] ?? 'none');
    const mark = join(stateDir, `started-${key.replace(/[^A-Za-z0-9_-]/g, '_')}`);
    if (existsSync(mark)) return text(`done ${key}`);
    writeFileSync(mark, String(process.pid));
    return new Promise<CallToolResult>(() => undefined);
  };
}
