/**
 * The node:http `fetch` (LLM_HTTP_CLIENT=node) against a real HTTP server on loopback: what the
 * provider SDKs rely on from `fetch`. The OpenAI adapter's whole suite also runs over it
 * (openai-adapter*.test.ts, "over the node HTTP client").
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeHttpFetch, type NodeHttpResponse } from '../../../src/llm/node-http-fetch.js';

let connections = 0;
let release: (() => void) | null = null;
const server = http.createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const sent = Buffer.concat(chunks).toString('utf8');
    switch (request.url) {
      case '/echo':
        response.setHeader('content-type', 'application/json');
        response.setHeader('set-cookie', ['a=1', 'b=2']);
        response.end(JSON.stringify({ method: request.method, body: sent, auth: request.headers['authorization'] ?? null }));
        return;
      case '/gzip':
        response.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'text/plain' });
        response.end(zlib.gzipSync('compressed hello'));
        return;
      case '/redirect':
        response.writeHead(302, { location: '/echo' });
        response.end();
        return;
      case '/slow':
        // Sends one chunk, then waits until the test lets it finish.
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write('data: first\n\n');
        release = () => response.end('data: last\n\n');
        return;
      default:
        response.writeHead(404);
        response.end('no such path');
    }
  });
});
server.on('connection', () => {
  connections += 1;
});
let base = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  release?.();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const fetchOf = () => createNodeHttpFetch() as unknown as (input: string, init?: RequestInit) => Promise<NodeHttpResponse>;

describe('createNodeHttpFetch', () => {
  it('sends the method, headers and body, and answers status, headers (repeated ones too) and JSON', async () => {
    const response = await fetchOf()(`${base}/echo`, { method: 'POST', headers: { Authorization: 'Bearer k', 'content-type': 'application/json' }, body: '{"x":1}' });
    expect([response.ok, response.status, response.url]).toEqual([true, 200, `${base}/echo`]);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await response.json()).toEqual({ method: 'POST', body: '{"x":1}', auth: 'Bearer k' });
  });

  it('sends headers given as a Headers object (as the SDKs give them) and as pairs', async () => {
    for (const headers of [new Headers({ Authorization: 'Bearer h' }), [['Authorization', 'Bearer h']] as [string, string][]]) {
      const response = await fetchOf()(`${base}/echo`, { method: 'POST', headers, body: '{}' });
      expect(await response.json()).toEqual({ method: 'POST', body: '{}', auth: 'Bearer h' });
    }
  });

  it('decompresses a gzip body, as fetch does', async () => {
    const response = await fetchOf()(`${base}/gzip`);
    expect(await response.text()).toBe('compressed hello');
  });

  it('keeps the connection alive between requests', async () => {
    const fetch = fetchOf();
    await (await fetch(`${base}/echo`)).text();
    const before = connections;
    await (await fetch(`${base}/echo`)).arrayBuffer();
    expect(connections).toBe(before);
  });

  it('returns a redirect as is, and a missing page with its status', async () => {
    const fetch = fetchOf();
    const moved = await fetch(`${base}/redirect`);
    expect([moved.status, moved.ok, moved.headers.get('location')]).toEqual([302, false, '/echo']);
    const missing = await fetch(`${base}/nowhere`);
    expect([missing.status, missing.ok, await missing.text()]).toEqual([404, false, 'no such path']);
  });

  it('streams the body as it arrives, and an abort mid-body ends it with the reason', async () => {
    const controller = new AbortController();
    const response = await fetchOf()(`${base}/slow`, { signal: controller.signal });
    const iterator = response.body[Symbol.asyncIterator]();
    expect(String((await iterator.next()).value)).toBe('data: first\n\n');
    controller.abort(new Error('stop reading'));
    await expect(iterator.next()).rejects.toThrow('stop reading');
    release?.();
  });

  it('rejects with the abort reason when aborted before, and with an AbortError by default', async () => {
    const fetch = fetchOf();
    const aborted = new AbortController();
    aborted.abort(new Error('too late'));
    await expect(fetch(`${base}/echo`, { signal: aborted.signal })).rejects.toThrow('too late');
    const during = new AbortController();
    const pending = fetch(`${base}/slow`, { signal: during.signal }).then((response) => response.text());
    during.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    release?.();
  });

  it('fails a refused connection as fetch does: TypeError "fetch failed" with the cause', async () => {
    const refused = http.createServer();
    await new Promise<void>((resolve) => refused.listen(0, '127.0.0.1', resolve));
    const port = (refused.address() as AddressInfo).port;
    await new Promise<void>((resolve) => refused.close(() => resolve()));
    const error = await fetchOf()(`http://127.0.0.1:${port}/`).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TypeError);
    expect(error).toMatchObject({ message: 'fetch failed', cause: { code: 'ECONNREFUSED' } });
  });

  it('refuses a body it cannot send, and a protocol other than http(s)', async () => {
    const fetch = fetchOf();
    await expect(fetch(`${base}/echo`, { method: 'POST', body: new ReadableStream() })).rejects.toThrow(TypeError);
    await expect(fetch('ftp://127.0.0.1/file')).rejects.toThrow(/unsupported protocol/);
  });
});
