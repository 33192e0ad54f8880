import type { ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import type { ImagePart } from '../core/messages.js';

/** The parts of an MCP `tools/call` result this module reads. */
export interface McpCallResult {
  content?: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/**
 * The text the model sees for an MCP tool result: each content part as text, joined with "\n". Text
 * parts are kept verbatim. An image or audio part becomes a line such as `[image: image/png, 12345
 * bytes]` (an image is also passed on as itself where it can be: {@link mcpResultImages}), an embedded text resource its text, a binary one
 * `[resource: <uri>, <mime type>, N bytes]`, and a resource link `[resource link: <uri>]`. A result
 * with no content but structured content gives that content as JSON.
 */
export function mcpResultText(result: McpCallResult): string {
  const parts = result.content ?? [];
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return parts.map(partText).join('\n');
}

/** The image types the providers take in a tool result. */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** Largest image passed on, decoded bytes (Anthropic's own limit per image is 5 MB). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

/** Most images passed on from one result. */
export const MAX_IMAGES = 8;

/**
 * The result's image parts the model can be shown, as `data:` URLs: PNG, JPEG, GIF or WebP, at most
 * {@link MAX_IMAGE_BYTES} each and {@link MAX_IMAGES} in all. The others stay the text line
 * {@link mcpResultText} gives every image.
 */
export function mcpResultImages(result: McpCallResult): ImagePart[] {
  const images: ImagePart[] = [];
  for (const part of result.content ?? []) {
    if (images.length === MAX_IMAGES) break;
    if (part.type !== 'image' || !IMAGE_TYPES.has(part.mimeType) || base64Bytes(part.data) > MAX_IMAGE_BYTES) continue;
    images.push({ type: 'image', url: `data:${part.mimeType};base64,${part.data}`, mediaType: part.mimeType });
  }
  return images;
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
