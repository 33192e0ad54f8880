import type { ContentBlock } from '@modelcontextprotocol/sdk/types.js';

/** The parts of an MCP `tools/call` result this module reads. */
export interface McpCallResult {
  content?: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/**
 * The text the model sees for an MCP tool result: each content part as text, joined with "\n". Text
 * parts are kept verbatim. Tool results in the loop are text, so an image or audio part becomes a
 * line such as `[image: image/png, 12345 bytes]`, an embedded text resource its text, a binary one
 * `[resource: <uri>, <mime type>, N bytes]`, and a resource link `[resource link: <uri>]`. A result
 * with no content but structured content gives that content as JSON.
 */
export function mcpResultText(result: McpCallResult): string {
  const parts = result.content ?? [];
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return parts.map(partText).join('\n');
}

function partText(part: ContentBlock): string {
  switch (part.type) {
    case 'text':
      return part.text;
    case 'image':
    case 'audio':
      return `[${part.type}: ${part.mimeType}, ${base64Bytes(part.data)} bytes]`;
    case 'resource': {
      const { resource } = part;
      if ('text' in resource) return resource.text;
      return `[resource: ${resource.uri}, ${resource.mimeType ?? 'unknown type'}, ${base64Bytes(resource.blob)} bytes]`;
    }
    case 'resource_link':
      return `[resource link: ${part.uri}]`;
    default:
      return `[${String((part as { type?: unknown }).type)} content]`;
  }
}

function base64Bytes(data: string): number {
  return Buffer.byteLength(data, 'base64');
}
