/** Tools from MCP servers (docs/mcp.md): server specs, one server's connection, and starting a list of them. */
export {
  MCP_SERVER_NAME_PATTERN,
  McpHttpServerSchema,
  McpServerSpecSchema,
  McpStdioServerSchema,
  parseMcpServerSpec,
  type McpHttpServer,
  type McpServerSpec,
  type McpStdioServer,
  type ResolvedMcpServer,
} from './mcp-server-spec.js';
export {
  IDEMPOTENCY_META_KEY,
  McpToolServer,
  type McpLogger,
  type McpServerState,
  type McpServerStatus,
  type McpToolServerOptions,
  type McpToolsListener,
} from './mcp-tool-server.js';
export { startMcpServers, type McpServers } from './start-mcp-servers.js';
export { MCP_NAME_SEPARATOR, mcpToolName } from './mcp-tool-name.js';
export { MAX_IMAGE_BYTES, MAX_IMAGES, mcpResultImages, mcpResultText, type McpCallResult } from './mcp-tool-result.js';
export { DEFAULT_RESTART_BACKOFF, type RestartBackoffOptions } from './restart-backoff.js';
