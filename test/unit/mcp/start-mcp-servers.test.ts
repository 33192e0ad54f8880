import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigInvalidError, InfrastructureError } from '../../../src/core/errors/index.js';
import { startMcpServers, type McpServerStatus } from '../../../src/mcp/index.js';
import { startTestHttpMcpServer, type TestHttpMcpServer } from '../../support/mcp/http-server.js';
import { RecordingLogger, stateDir } from '../../support/mcp/mcp-harness.js';

/** A port nothing listens on: one the system handed out and that was closed again. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

const MISSING = { command: '/nonexistent/loopfleet-mcp-server', env: { TOKEN: 'env-secret-5531' } };

describe('startMcpServers', () => {
  const dir = stateDir();
  let http: TestHttpMcpServer;
  beforeAll(async () => {
    http = await startTestHttpMcpServer(dir.path);
  });
  afterAll(async () => {
    await http.close();
    dir.cleanup();
  });

  it('leaves an optional server that cannot start out: no tools, a warning, reported absent', async () => {
    const logger = new RecordingLogger();
    const statuses: McpServerStatus[] = [];
    const servers = await startMcpServers([{ mcp: { name: 'gone', ...MISSING, optional: true } }, { mcp: { name: 'web', url: http.url } }], {
      logger,
      onStatus: (status) => statuses.push(status),
    });
    try {
      expect(servers.tools().every((tool) => tool.name.startsWith('web__'))).toBe(true);
      expect(servers.tools().length).toBeGreaterThan(0);
      expect(servers.servers.map((server) => [server.name, server.state()])).toEqual([['gone', 'absent'], ['web', 'up']]);
      expect(statuses.filter((status) => status.server === 'gone').at(-1)).toEqual({ server: 'gone', state: 'absent', up: false });
      expect(statuses.filter((status) => status.server === 'web').at(-1)).toEqual({ server: 'web', state: 'up', up: true });
      expect(logger.warnings().some((line) => line.includes('optional MCP server could not start') && line.includes('"gone"'))).toBe(true);
      expect(JSON.stringify(logger.lines)).not.toContain('env-secret-5531');
    } finally {
      await servers.close();
    }
  });

  it('fails start-up when a required server cannot start, naming it and no env value', async () => {
    const started = startMcpServers([{ mcp: { name: 'web', url: http.url } }, { mcp: { name: 'gone', ...MISSING } }], { logger: new RecordingLogger() });
    const error = await started.then(
      () => null,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(InfrastructureError);
    expect((error as Error).message).toMatch(/^MCP server "gone" cannot start: .*ENOENT/);
    expect((error as Error).message).not.toContain('env-secret-5531');
  });

  it('fails start-up when a required HTTP server does not answer, never quoting its headers', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    const started = startMcpServers([{ mcp: { name: 'down', url, headers: { authorization: 'Bearer hdr-secret-9' } } }], { logger: new RecordingLogger() });
    await expect(started).rejects.toThrow(/^MCP server "down" cannot start/);
    await expect(started).rejects.not.toThrow(/hdr-secret-9/);
  });

  it('refuses two servers of the same name', async () => {
    const started = startMcpServers([{ mcp: { name: 'a', url: http.url } }, { mcp: { name: 'a', command: 'x' } }], { logger: new RecordingLogger() });
    await expect(started).rejects.toBeInstanceOf(ConfigInvalidError);
    await expect(started).rejects.toThrow('MCP server spec #1 ("a"): mcp.name: another server has this name');
  });
});
