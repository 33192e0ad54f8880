import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpToolServer, parseMcpServerSpec } from '../../../src/mcp/index.js';
import { startTestHttpMcpServer, type TestHttpMcpServer } from '../../support/mcp/http-server.js';
import { RecordingLogger, runTool, stateDir } from '../../support/mcp/mcp-harness.js';

describe('McpToolServer over Streamable HTTP', () => {
  const dir = stateDir();
  let http: TestHttpMcpServer;
  let server: McpToolServer;
  const logger = new RecordingLogger();
  beforeAll(async () => {
    http = await startTestHttpMcpServer(dir.path);
    const spec = parseMcpServerSpec({ mcp: { name: 'web', url: http.url, headers: { 'x-api-key': 'key-7781' }, timeoutMs: 1_500 } });
    server = new McpToolServer(spec, { logger, backoff: { initialMs: 10, maxMs: 100 } });
    await server.start();
  });
  afterAll(async () => {
    await server.close();
    await http.close();
    dir.cleanup();
  });

  it('lists and calls tools, sending the spec headers on every request', async () => {
    expect(server.tools().map((tool) => tool.name)).toContain('web__echo');
    expect(await runTool(server.tools(), 'web__echo', { text: 'over http' })).toMatchObject({ failed: false, content: 'over http' });
    expect(http.apiKeys.length).toBeGreaterThan(0);
    expect(new Set(http.apiKeys)).toEqual(new Set(['key-7781']));
  });

  it('times a hanging tool out as tool.timeout', async () => {
    const outcome = await runTool(server.tools(), 'web__hang');
    expect(outcome).toMatchObject({ failed: true, errorCode: 'tool.timeout' });
  });

  it('opens a new session when the server has lost the old one, and sends the call again', async () => {
    await http.dropSessions();
    // meta has no idempotentHint: a request the server refused (404) never ran, so it is sent again anyway.
    const outcome = await runTool(server.tools(), 'web__meta', {}, 'after-drop');
    expect(outcome).toMatchObject({ failed: false });
    expect(JSON.parse(outcome.content)).toMatchObject({ 'loopfleet/idempotencyKey': 's1:after-drop' });
    expect(server.state()).toBe('up');
    expect(logger.lines.filter((line) => 'loss' in line.fields).map((line) => line.fields)).toEqual([{ server: 'web', tool: 'meta', loss: 'not_delivered' }]);
  });
});
