import type { ImagePart } from '../messages.js';

/**
 * A tool result with images beside its text (an MCP server's image parts): the model gets the text
 * and the images in one tool result, as far as its provider allows (Anthropic: image blocks in the
 * `tool_result`; OpenAI's tool messages hold text only, so each image is a placeholder there). A
 * handler returns one instead of a string; the text is truncated like any result, the images are not
 * (bound them where they are made).
 */
export class ToolResultWithImages {
  constructor(
    readonly text: string,
    readonly images: readonly ImagePart[],
  ) {}
}
