/**
 * The SSE reader the OpenAI adapter parses its streams with: the standard's line and field rules,
 * every way a body can be cut into chunks, and agreement with the OpenAI SDK's own decoder (which the
 * adapter used before) on the streams real endpoints send.
 */
import { _iterSSEMessages } from 'openai/core/streaming';
import { describe, expect, it } from 'vitest';
import { SseParser, sseEvents, type SseEvent } from '../../../src/llm/sse-events.js';

const encoder = new TextEncoder();

async function* chunksOf(parts: (string | Uint8Array)[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield typeof part === 'string' ? encoder.encode(part) : part;
}

async function read(parts: (string | Uint8Array)[]): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of sseEvents(chunksOf(parts))) events.push(event);
  return events;
}

/** The body's bytes cut at every offset into two chunks, and at every pair of offsets into three. */
function splits(bytes: Uint8Array): Uint8Array[][] {
  const result: Uint8Array[][] = [];
  for (let a = 0; a <= bytes.length; a += 1) {
    result.push([bytes.subarray(0, a), bytes.subarray(a)]);
    for (let b = a; b <= bytes.length; b += 7) result.push([bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)]);
  }
  return result;
}

/** What the OpenAI SDK's decoder makes of the same bytes (`openai/core/streaming`). */
async function sdkRead(bytes: Uint8Array): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const sse of _iterSSEMessages(new Response(bytes), new AbortController())) events.push({ event: sse.event, data: sse.data });
  return events;
}

const chunk = (content: string) => JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }] });

/** What OpenAI and compatible endpoints send: LF, CRLF, keep-alive comments, named events, multi-byte text. */
const REALISTIC: Record<string, string> = {
  'LF-framed chunks and [DONE]': `data: ${chunk('Hel')}\n\ndata: ${chunk('lo — ünïcödé 🙂')}\n\ndata: [DONE]\n\n`,
  'CRLF-framed chunks': `data: ${chunk('a')}\r\n\r\ndata: ${chunk('b')}\r\n\r\ndata: [DONE]\r\n\r\n`,
  'keep-alive comments and an empty line first': `: ping\n\n\ndata: ${chunk('x')}\n\n: OPENROUTER PROCESSING\n\ndata: [DONE]\n\n`,
  'named events and data without a space': `event: message\ndata:${chunk('y')}\n\nevent: error\ndata: {"error":{"message":"overloaded"}}\n\n`,
  'multi-line data': `data: {"a":\ndata: 1}\n\n`,
  'an id and retry field': `id: 7\nretry: 1000\ndata: ${chunk('z')}\n\n`,
};

describe('sseEvents', () => {
  it('refuses an event or a line past the limit with llm.bad_response, however the body is cut', async () => {
    const collect = async (parts: string[], limit: number) => {
      const events: SseEvent[] = [];
      for await (const event of sseEvents(chunksOf(parts), { maxEventChars: limit })) events.push(event);
      return events;
    };
    // A line that never ends, arriving in pieces: refused once it passes the limit.
    await expect(collect(['data: ', 'x'.repeat(6), 'x'.repeat(6)], 10)).rejects.toMatchObject({ code: 'llm.bad_response' });
    // Many short data lines of one event add up.
    await expect(collect(['data: abcd\ndata: efgh\ndata: ijkl\n'], 10)).rejects.toMatchObject({ code: 'llm.bad_response' });
    // Events under the limit, one after another, are fine: the count starts again with each.
    expect(await collect(['data: abcd\n\ndata: efgh\n\ndata: ijkl\n\n'], 10)).toHaveLength(3);
  });

  it('yields each event with its name and data, in order', async () => {
    expect(await read(['event: delta\ndata: one\n\ndata: two\n\n'])).toEqual([
      { event: 'delta', data: 'one' },
      { event: null, data: 'two' },
    ]);
  });

  it('ends lines at LF, CRLF and CR alike', async () => {
    const expected = [{ event: null, data: 'a' }, { event: null, data: 'b' }, { event: null, data: 'c' }];
    expect(await read(['data: a\n\ndata: b\r\n\r\ndata: c\r\r'])).toEqual(expected);
  });

  it('a CR ending one chunk and its LF starting the next are one line end, not two', async () => {
    expect(await read(['data: a\r', '\ndata: b\r\n', '\r', '\n'])).toEqual([{ event: null, data: 'a\nb' }]);
  });

  it('joins data lines with LF; drops one space after the colon only', async () => {
    expect(await read(['data: first\ndata:second\ndata:  third\ndata\n\n'])).toEqual([{ event: null, data: 'first\nsecond\n third\n' }]);
  });

  it('skips comments, id, retry and unknown fields; a blank line with nothing pending yields nothing', async () => {
    expect(await read([': comment\n\nid: 1\nretry: 5\nfoo: bar\n\n\n\ndata: x\n\n'])).toEqual([{ event: null, data: 'x' }]);
  });

  it('yields an event with a name and no data (as the SDK does), with empty data', async () => {
    expect(await read(['event: ping\n\n'])).toEqual([{ event: 'ping', data: '' }]);
  });

  it('drops an event the body ends in the middle of', async () => {
    expect(await read(['data: done\n\ndata: cut off'])).toEqual([{ event: null, data: 'done' }]);
    expect(await read(['data: done\n\ndata: no blank line\n'])).toEqual([{ event: null, data: 'done' }]);
  });

  it('decodes a UTF-8 character split between chunks whole, and skips a leading byte-order mark', async () => {
    const bytes = encoder.encode('\uFEFFdata: 🙂é\n\n');
    for (const parts of splits(bytes)) expect(await read(parts)).toEqual([{ event: null, data: '🙂é' }]);
  });

  it('gives the same events however the body is cut into chunks', async () => {
    const body = encoder.encode(`event: a\r\ndata: 1\r\n\r\n: c\rdata: 2\rdata: 3\r\rdata: ${chunk('ü')}\n\ndata: [DONE]\n\n`);
    const whole = await read([body]);
    expect(whole.map((event) => event.data)).toEqual(['1', '2\n3', chunk('ü'), '[DONE]']);
    for (const parts of splits(body)) expect(await read(parts)).toEqual(whole);
  });

  it('calls onChunk for every chunk as it arrives, comments included (a stall guard counts bytes)', async () => {
    const log: string[] = [];
    const events = sseEvents(chunksOf([': OPENROUTER PROCESSING\n\n', ': OPENROUTER PROCESSING\n\n', 'data: a\n\n']), { onChunk: () => log.push('chunk') });
    for await (const event of events) log.push(`event:${event.data}`);
    expect(log).toEqual(['chunk', 'chunk', 'chunk', 'event:a']);
  });

  it('throws what the body throws', async () => {
    async function* broken(): AsyncGenerator<Uint8Array> {
      yield encoder.encode('data: a\n\n');
      throw new TypeError('terminated');
    }
    const seen: SseEvent[] = [];
    await expect(async () => {
      for await (const event of sseEvents(broken())) seen.push(event);
    }).rejects.toThrow('terminated');
    expect(seen).toEqual([{ event: null, data: 'a' }]);
  });

  describe('agrees with the OpenAI SDK decoder on what endpoints send', () => {
    for (const [name, text] of Object.entries(REALISTIC)) {
      it(name, async () => {
        const bytes = encoder.encode(text);
        const sdk = await sdkRead(bytes);
        expect(sdk.length).toBeGreaterThan(0);
        for (const parts of splits(bytes)) expect(await read(parts)).toEqual(sdk);
      });
    }
  });
});

describe('SseParser', () => {
  it('returns the events each piece of text completes, keeping a partial line for the next', () => {
    const parser = new SseParser();
    expect(parser.push('data: a')).toEqual([]);
    expect(parser.push('bc\n')).toEqual([]);
    expect(parser.push('\ndata: d\n')).toEqual([{ event: null, data: 'abc' }]);
    expect(parser.end()).toEqual([]);
  });

  it('starts clean after end()', () => {
    const parser = new SseParser();
    parser.push('event: x\ndata: partial');
    parser.end();
    expect(parser.push('data: fresh\n\n')).toEqual([{ event: null, data: 'fresh' }]);
  });
});
