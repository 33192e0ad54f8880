import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ResolvedMcpServer } from './mcp-server-spec.js';

/**
 * A new transport for one connection to `server`. stdio: the process gets the SDK's default
 * environment (`HOME`, `PATH`, `USER` … , not the worker's whole environment) plus the spec's `env`,
 * and its standard error goes to the worker's. HTTP: the spec's `headers` go on every request.
 */
export function createMcpTransport(server: ResolvedMcpServer): Transport {
  if (server.transport === 'stdio') {
    return new StdioClientTransport({
      command: server.command,
      args: server.args ?? [],
      env: { ...getDefaultEnvironment(), ...server.env },
      stderr: 'inherit',
    });
  }
  return new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { ...server.headers } } });
}

/** The secrets a spec carries (env and header values), for the SecretScrubber. */
export function mcpSecrets(server: ResolvedMcpServer): string[] {
  return Object.values(server.transport === 'stdio' ? (server.env ?? {}) : (server.headers ?? {}));
}

/** The process id of a stdio connection, for logs; null for HTTP or before it started. */
export function transportPid(transport: Transport): number | null {
  return transport instanceof StdioClientTransport ? transport.pid : null;
}
