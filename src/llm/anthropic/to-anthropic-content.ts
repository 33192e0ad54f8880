/**
 * Internal content (a string or text/image parts) → Anthropic content blocks.
 *
 * Two rules of the Messages API shape everything here: a text block must contain non-whitespace
 * text (an empty or blank one is a 400), and an image is either base64 data of one of four media
 * types or a URL. Anything that cannot be sent as an image degrades to a short text placeholder
 * instead of failing the request: a 400 would repeat on every later round of the session.
 */
import type { ImageBlockParam, TextBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { ImagePart, MessageContent } from '../../core/messages.js';

/** A block of user-visible content: text or an image. */
export type AnthropicContentBlock = TextBlockParam | ImageBlockParam;

type Base64MediaType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';

/** The media types Anthropic accepts for base64 images; `image/jpg` is a common misspelling. */
const MEDIA_TYPES: ReadonlyMap<string, Base64MediaType> = new Map<string, Base64MediaType>([
  ['image/jpeg', 'image/jpeg'],
  ['image/jpg', 'image/jpeg'],
  ['image/png', 'image/png'],
  ['image/gif', 'image/gif'],
  ['image/webp', 'image/webp'],
]);

/** `data:<type>[;param]*,<payload>`; the `s` flag because base64 payloads may be wrapped. */
const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/is;

/** A text block, or nothing when the text is empty or blank (the API rejects those). */
export function textBlocks(text: string): TextBlockParam[] {
  return text.trim() === '' ? [] : [{ type: 'text', text }];
}

/**
 * The blocks for `content`, in order. Blank text parts are left out, so the result may be empty;
 * the caller decides what an empty turn means. With `images: false` (assistant turns, which cannot
 * carry images) image parts become placeholders too.
 */
export function toAnthropicContent(content: MessageContent, options: { images?: boolean } = {}): AnthropicContentBlock[] {
  if (typeof content === 'string') return textBlocks(content);
  const allowImages = options.images ?? true;
  return content.flatMap((part): AnthropicContentBlock[] => {
    if (part.type === 'text') return textBlocks(part.text);
    if (!allowImages) return [imagePlaceholder('images cannot be sent in an assistant turn')];
    return [toImageBlock(part)];
  });
}

/**
 * An image part as an `image` block: a `data:` URL becomes a base64 source, an http(s) URL a URL
 * source. The part's `mediaType`, when given, wins over the data URL's own type.
 */
export function toImageBlock(part: ImagePart): AnthropicContentBlock {
  const url = part.url.trim();
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  const match = DATA_URL.exec(url);
  if (match === null) return imagePlaceholder('unsupported image URL scheme');
  const [, declaredType = '', params = '', payload = ''] = match;
  if (!params.toLowerCase().split(';').includes('base64')) return imagePlaceholder('a data URL that is not base64');
  const rawType = (part.mediaType ?? declaredType).trim().toLowerCase();
  const mediaType = MEDIA_TYPES.get(rawType);
  if (mediaType === undefined) return imagePlaceholder(`unsupported media type ${rawType === '' ? '(none)' : rawType}`);
  const data = payload.replace(/\s+/g, '');
  if (data === '') return imagePlaceholder('an empty image');
  return { type: 'image', source: { type: 'base64', media_type: mediaType, data } };
}

/** What the model sees instead of an image it cannot be shown. */
export function imagePlaceholder(reason: string): TextBlockParam {
  return { type: 'text', text: `[image omitted: ${reason}]` };
}
