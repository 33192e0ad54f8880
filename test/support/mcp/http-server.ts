import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { createTestMcpServer } from './test-tools.js';

/** The test MCP server over Streamable HTTP, in this process, on 127.0.0.1 and a free port. */
export interface TestHttpMcpServer {
  url: string;
  /** The `x-api-key` header of each request, in order. */
  apiKeys: (string | undefined)[];
  /** Forgets every session, as a restarted server would: the next request of a client gets a 404. */
  dropSessions(): Promise<void>;
  close(): Promise<void>;
}

export async function startTestHttpMcpServer(stateDir: string): Promise<TestHttpMcpServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const apiKeys: (string | undefined)[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    apiKeys.push(header(req, 'x-api-key'));
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    const sessionId = header(req, 'mcp-session-id');
    const known = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (known !== undefined) return known.handleRequest(req, res, body);
    if (sessionId !== undefined || !isInitializeRequest(body)) return void res.writeHead(404).end();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (id) => void sessions.set(id, transport) });
    await createTestMcpServer({ stateDir }).connect(transport);
    await transport.handleRequest(req, res, body);
  };
  const http = createServer((req, res) => void handle(req, res).catch(() => res.writeHead(500).end()));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  const dropSessions = async () => {
    const open = [...sessions.values()];
    sessions.clear();
    await Promise.all(open.map((transport) => transport.close()));
  };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    apiKeys,
    dropSessions,
    async close() {
      await dropSessions();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
}
