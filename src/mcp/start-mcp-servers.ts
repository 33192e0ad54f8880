import { ConfigInvalidError } from '../core/errors/index.js';
import type { AnyToolDefinition } from '../core/tools/index.js';
import { parseMcpServerSpec } from './mcp-server-spec.js';
import { McpToolServer, type McpToolServerOptions } from './mcp-tool-server.js';

/** The servers {@link startMcpServers} started, and their tools together. */
export interface McpServers {
  /** Every server of the list, in its order; an optional one that could not start is `absent` and has no tools. */
  readonly servers: readonly McpToolServer[];
  /** Every server's current tools, in the list's order. */
  tools(): AnyToolDefinition[];
  /** Calls `listener` when any server's tool list changes; returns a function that stops it. */
  onChange(listener: (tools: AnyToolDefinition[]) => void): () => void;
  /** Closes every server. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * Validates `specs` (`{ mcp: { … } }` each; `ConfigInvalidError` naming the field) and starts the
 * servers side by side. A required server that cannot start fails the whole start with an error naming
 * it, after the others are closed; an optional one is logged as a warning, reported `absent` to
 * `onStatus` (up: false) and offers no tools. Server names must be unique.
 */
export async function startMcpServers(specs: readonly unknown[], options: McpToolServerOptions): Promise<McpServers> {
  const resolved = specs.map((spec, index) => parseMcpServerSpec(spec, index));
  assertUniqueNames(resolved.map((server) => server.name));
  const servers = resolved.map((spec) => new McpToolServer(spec, options));
  const started = await Promise.allSettled(servers.map((server) => server.start()));
  const failed = started.findIndex((outcome, index) => outcome.status === 'rejected' && !resolved[index]!.optional);
  if (failed !== -1) {
    await Promise.all(servers.map((server) => server.close()));
    throw (started[failed] as PromiseRejectedResult).reason;
  }
  started.forEach((outcome, index) => {
    if (outcome.status === 'fulfilled') return;
    const server = servers[index]!;
    server.markAbsent();
    options.logger.warn({ server: server.name, err: outcome.reason as unknown }, 'optional MCP server could not start: its tools are absent');
  });
  return group(servers);
}

function group(servers: readonly McpToolServer[]): McpServers {
  const tools = () => servers.flatMap((server) => [...server.tools()]);
  return {
    servers,
    tools,
    onChange(listener) {
      const stops = servers.map((server) => server.onChange(() => listener(tools())));
      return () => stops.forEach((stop) => stop());
    },
    async close() {
      await Promise.all(servers.map((server) => server.close()));
    },
  };
}

function assertUniqueNames(names: readonly string[]): void {
  const seen = new Set<string>();
  for (const [index, name] of names.entries()) {
    if (seen.has(name)) throw new ConfigInvalidError(`MCP server spec #${index} ("${name}"): mcp.name: another server has this name`, { details: { field: 'mcp.name' } });
    seen.add(name);
  }
}
