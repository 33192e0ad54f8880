import { z } from 'zod';
import { ConfigInvalidError } from '../core/errors/index.js';
import { DEFAULT_TOOL_TIMEOUT_MS, MAX_TOOL_TIMEOUT_MS } from '../core/tools/index.js';

/** A server's name: the prefix of its tools' names (`<server>__<tool>`), so short. */
export const MCP_SERVER_NAME_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;

const name = z.string().regex(MCP_SERVER_NAME_PATTERN, 'must be 1–32 characters of letters, digits, "_" or "-"');
const optional = z.boolean().optional();
const timeoutMs = z.number().int().positive().max(MAX_TOOL_TIMEOUT_MS, `must be at most ${MAX_TOOL_TIMEOUT_MS} (milliseconds)`).optional();
const stringMap = z.record(z.string(), z.string());
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http or https URL' });

/** A server run as a child process, spoken to over its standard input and output. */
export const McpStdioServerSchema = z.strictObject({
  name,
  command: z.string().min(1, 'must not be empty'),
  args: z.array(z.string()).optional(),
  env: stringMap.optional(),
  optional,
  timeoutMs,
});

/** A server reached over Streamable HTTP. */
export const McpHttpServerSchema = z.strictObject({ name, url: httpUrl, headers: stringMap.optional(), optional, timeoutMs });

/** `{ mcp: { … } }`: one MCP server whose tools an agent gets (docs/mcp.md). */
export const McpServerSpecSchema = z.strictObject({ mcp: z.union([McpStdioServerSchema, McpHttpServerSchema]) });

export type McpStdioServer = z.infer<typeof McpStdioServerSchema>;
export type McpHttpServer = z.infer<typeof McpHttpServerSchema>;
export type McpServerSpec = z.infer<typeof McpServerSpecSchema>;

/** A spec with its defaults resolved: what {@link McpToolServer} runs. */
export type ResolvedMcpServer =
  | (Omit<McpStdioServer, 'optional' | 'timeoutMs'> & { transport: 'stdio'; optional: boolean; timeoutMs: number })
  | (Omit<McpHttpServer, 'optional' | 'timeoutMs'> & { transport: 'http'; optional: boolean; timeoutMs: number });

/**
 * Validates one spec and resolves its defaults (`optional` false, `timeoutMs` 60000). Throws
 * `ConfigInvalidError` naming the field (`mcp.timeoutMs: …`) and the spec's place; the message never
 * quotes a value, since `env` and `headers` may hold keys.
 */
export function parseMcpServerSpec(value: unknown, index = 0): ResolvedMcpServer {
  const label = `MCP server spec #${index}${serverNameOf(value)}`;
  const inner = isRecord(value) && isRecord(value['mcp']) ? value['mcp'] : null;
  if (inner === null) throw specError(label, 'mcp', 'must be an object: { mcp: { name, command | url, … } }');
  const hasCommand = 'command' in inner;
  if (hasCommand === 'url' in inner) throw specError(label, 'mcp', 'give either command (stdio) or url (Streamable HTTP), not both or neither');
  const schema = z.strictObject({ mcp: hasCommand ? McpStdioServerSchema : McpHttpServerSchema });
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw specError(label, issue === undefined ? 'mcp' : fieldOf(issue), issue?.message ?? 'is invalid');
  }
  const server = parsed.data.mcp;
  const defaults = { optional: server.optional ?? false, timeoutMs: server.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS };
  return 'command' in server ? Object.assign({}, server, defaults, { transport: 'stdio' as const }) : Object.assign({}, server, defaults, { transport: 'http' as const });
}

/** The dotted path of an issue; an unknown key is named as itself. */
function fieldOf(issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') return [path, issue.keys.join(', ')].filter((part) => part !== '').join('.');
  return path === '' ? 'mcp' : path;
}

function specError(label: string, field: string, message: string): ConfigInvalidError {
  return new ConfigInvalidError(`${label}: ${field}: ${message}`, { details: { field } });
}

function serverNameOf(value: unknown): string {
  const server = isRecord(value) && isRecord(value['mcp']) ? value['mcp']['name'] : undefined;
  return typeof server === 'string' && MCP_SERVER_NAME_PATTERN.test(server) ? ` ("${server}")` : '';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
