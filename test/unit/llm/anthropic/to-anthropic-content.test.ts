import { describe, expect, it } from 'vitest';
import type { ImagePart, MessageContent } from '../../../../src/core/messages.js';
import { toAnthropicContent, toImageBlock, toAnthropicToolUseId } from '../../../../src/llm/anthropic/index.js';

const B64 = 'R0lGODlhAQABAAAAACw=';

describe('toImageBlock', () => {
  const cases: [string, ImagePart, unknown][] = [
    ['png data URL', { type: 'image', url: `data:image/png;base64,${B64}` }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: B64 } }],
    ['jpg is spelled jpeg', { type: 'image', url: `data:image/jpg;base64,${B64}` }, { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: B64 } }],
    ['mediaType wins over the URL', { type: 'image', url: `data:application/octet-stream;base64,${B64}`, mediaType: 'image/gif' }, { type: 'image', source: { type: 'base64', media_type: 'image/gif', data: B64 } }],
    ['extra parameters and wrapped base64', { type: 'image', url: `data:image/webp;name=a.webp;base64,${B64.slice(0, 8)}\n${B64.slice(8)}` }, { type: 'image', source: { type: 'base64', media_type: 'image/webp', data: B64 } }],
    ['https URL', { type: 'image', url: 'https://example.com/a.png' }, { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }],
    ['svg degrades', { type: 'image', url: `data:image/svg+xml;base64,${B64}` }, { type: 'text', text: '[image omitted: unsupported media type image/svg+xml]' }],
    ['not base64 degrades', { type: 'image', url: 'data:image/png,%89PNG' }, { type: 'text', text: '[image omitted: a data URL that is not base64]' }],
    ['empty data degrades', { type: 'image', url: 'data:image/png;base64,' }, { type: 'text', text: '[image omitted: an empty image]' }],
    ['file URL degrades', { type: 'image', url: 'file:///etc/passwd' }, { type: 'text', text: '[image omitted: unsupported image URL scheme]' }],
  ];
  it.each(cases)('%s', (_name, part, expected) => {
    expect(toImageBlock(part)).toEqual(expected);
  });
});

describe('toAnthropicContent', () => {
  const cases: [string, MessageContent, unknown[]][] = [
    ['a string', 'hello', [{ type: 'text', text: 'hello' }]],
    ['an empty string', '', []],
    ['a blank string', ' \n\t', []],
    ['blank text parts are left out', [{ type: 'text', text: ' ' }, { type: 'text', text: 'x' }], [{ type: 'text', text: 'x' }]],
    ['text keeps its own whitespace', '  padded  ', [{ type: 'text', text: '  padded  ' }]],
  ];
  it.each(cases)('%s', (_name, content, expected) => {
    expect(toAnthropicContent(content)).toEqual(expected);
  });
});

describe('toAnthropicToolUseId', () => {
  it.each([
    ['toolu_01A09q90qw90lq917835lq9', true],
    ['call_abc-123', true],
    ['functions.search:0', false],
    ['id with spaces', false],
    ['', false],
  ])('%s kept as is: %s', (id, kept) => {
    const mapped = toAnthropicToolUseId(id);
    expect(mapped === id).toBe(kept);
    expect(mapped).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(toAnthropicToolUseId(id)).toBe(mapped);
  });

  it('keeps different invalid ids apart', () => {
    expect(toAnthropicToolUseId('a.b')).not.toBe(toAnthropicToolUseId('a:b'));
  });
});
