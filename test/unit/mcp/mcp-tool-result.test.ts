import { describe, expect, it } from 'vitest';
import { MAX_IMAGE_BYTES, MAX_IMAGES, mcpResultImages, mcpResultText, mcpToolName } from '../../../src/mcp/index.js';
import { RestartBackoff } from '../../../src/mcp/restart-backoff.js';

describe('mcpResultText', () => {
  it('renders audio, a binary resource and an unknown part as a line each', () => {
    const text = mcpResultText({
      content: [
        { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'file:///a.bin', blob: 'AAAAAA==' } },
        { type: 'text', text: '' },
      ],
    });
    expect(text).toBe('[audio: audio/wav, 3 bytes]\n[resource: file:///a.bin, unknown type, 4 bytes]\n');
  });

  it('gives structured content as JSON when there is no content', () => {
    expect(mcpResultText({ content: [], structuredContent: { n: 1 } })).toBe('{"n":1}');
    expect(mcpResultText({})).toBe('');
  });
});

describe('mcpResultImages', () => {
  it('passes PNG, JPEG, GIF and WebP images on as data: URLs; other types and oversized ones stay text lines', () => {
    const big = 'A'.repeat(Math.ceil((MAX_IMAGE_BYTES + 3) / 3) * 4);
    const images = mcpResultImages({
      content: [
        { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
        { type: 'text', text: 'between' },
        { type: 'image', data: 'PHN2Zz4=', mimeType: 'image/svg+xml' },
        { type: 'image', data: big, mimeType: 'image/jpeg' },
        { type: 'image', data: '/9j/4AAQ', mimeType: 'image/jpeg' },
      ],
    });
    expect(images).toEqual([
      { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=', mediaType: 'image/png' },
      { type: 'image', url: 'data:image/jpeg;base64,/9j/4AAQ', mediaType: 'image/jpeg' },
    ]);
  });

  it(`passes on ${MAX_IMAGES} images at most`, () => {
    const content = Array.from({ length: MAX_IMAGES + 2 }, () => ({ type: 'image' as const, data: 'R0lGOD==', mimeType: 'image/gif' }));
    expect(mcpResultImages({ content })).toHaveLength(MAX_IMAGES);
  });
});

describe('mcpToolName', () => {
  it('joins server and tool with "__", or refuses a name the providers would', () => {
    expect(mcpToolName('files', 'read_file')).toBe('files__read_file');
    expect(mcpToolName('files', 'read.file')).toBeNull();
    expect(mcpToolName('s', 'x'.repeat(61))).toBe(`s__${'x'.repeat(61)}`);
    expect(mcpToolName('s', 'x'.repeat(62))).toBeNull();
  });
});

describe('RestartBackoff', () => {
  it('doubles to the cap, and starts over after a stable period', () => {
    const backoff = new RestartBackoff({ initialMs: 500, maxMs: 3_000, stableMs: 60_000 });
    expect([0, 1, 2, 3, 4].map(() => backoff.nextDelay(0))).toEqual([500, 1_000, 2_000, 3_000, 3_000]);
    backoff.up(1_000);
    expect(backoff.nextDelay(2_000)).toBe(3_000);
    backoff.up(10_000);
    expect(backoff.nextDelay(70_000)).toBe(500);
  });
});
