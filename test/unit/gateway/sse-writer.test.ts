import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { afterEach, describe, expect, it } from 'vitest';
import { formatSse, SseWriter } from '../../../src/gateway/sse/sse-writer.js';

describe('formatSse', () => {
  it('writes id, event and one data line per line', () => {
    expect(formatSse({ id: '1-0', event: 'x', data: 'a\nb' })).toBe('id: 1-0\nevent: x\ndata: a\ndata: b\n\n');
    expect(formatSse({ event: 'bad\nname', data: '{}' })).toBe('event: bad name\ndata: {}\n\n');
  });
});

describe('SseWriter', () => {
  let server: Server | null = null;
  afterEach(async () => {
    if (server === null) return;
    const closing = new Promise<void>((resolve) => server!.close(() => resolve()));
    server.closeAllConnections();
    await closing;
    server = null;
  });

  async function serve(handler: (writer: SseWriter) => Promise<void>): Promise<string> {
    server = createServer((_req, res) => {
      const writer = new SseWriter(res, { heartbeatMs: 20, headers: { 'access-control-allow-origin': '*' } });
      writer.open();
      void handler(writer);
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  }

  it('sends headers at once, events, heartbeats, and parses back', async () => {
    let writerSeen: SseWriter | null = null;
    const url = await serve(async (writer) => {
      writerSeen = writer;
      await writer.send({ id: '1-0', event: 'hello', data: '{"a":1}' });
    });
    const response = await fetch(url);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const events: EventSourceMessage[] = [];
    const comments: string[] = [];
    const parser = createParser({ onEvent: (e) => events.push(e), onComment: (c) => comments.push(c) });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    const deadline = Date.now() + 5000;
    while (comments.length < 2 && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.feed(value);
    }
    expect(events).toEqual([{ id: '1-0', event: 'hello', data: '{"a":1}' }]);
    expect(comments.slice(0, 2)).toEqual(['hb', 'hb']);
    await reader.cancel();
    const writer = writerSeen as unknown as SseWriter;
    await new Promise<void>((resolve) => (writer.signal.aborted ? resolve() : writer.signal.addEventListener('abort', () => resolve())));
    expect(writer.signal.aborted).toBe(true);
  });
});
