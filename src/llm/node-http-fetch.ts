/**
 * A `fetch` on `node:http`/`node:https` for the provider SDKs (`LLM_HTTP_CLIENT=node`, the default).
 *
 * Node's own `fetch` (undici) wraps every response body in a WHATWG stream and every request in
 * Request/Headers/AbortSignal machinery; through the OpenAI SDK, a standard input's two streamed
 * calls spent a quarter of the worker's CPU there (bench/history/log-to-session-30.md, item 20). The SDKs (OpenAI, Anthropic)
 * only need a Response-shaped object whose `body` they can iterate: they take any async-iterable body
 * as is. So this
 * returns `status`, `ok`, `statusText`, `url`, `headers` (a `Headers`), `body` (the Node response
 * stream, decompressed when the server encoded it) and `text()`/`json()`/`arrayBuffer()`.
 *
 * Semantics kept from `fetch`: a failed connection rejects with `TypeError('fetch failed', { cause })`;
 * an abort (before or during the body) rejects or errors the body with the signal's reason (an
 * `AbortError` by default); redirects are not followed (`redirect: 'manual'` behaviour: a 3xx is
 * returned as is — the providers' APIs do not redirect). Request bodies: strings and byte arrays;
 * anything else is refused with a `TypeError` (the chat endpoints send JSON text). Connections are
 * kept alive per instance. Not supported: undici's global dispatcher (`setGlobalDispatcher`, e.g. a
 * `ProxyAgent`) — use `LLM_HTTP_CLIENT=fetch` behind such a proxy.
 */
import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';

/** The response this fetch resolves with: the parts of `Response` the SDKs read. */
export interface NodeHttpResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly url: string;
  readonly redirected: false;
  readonly headers: Headers;
  /** The body as a Node stream of byte chunks (async-iterable). */
  readonly body: Readable;
  text(): Promise<string>;
  json(): Promise<unknown>;
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** A `fetch`-compatible function with its own keep-alive connection pools. */
export function createNodeHttpFetch(): typeof fetch {
  const agents = {
    'http:': new http.Agent({ keepAlive: true }),
    'https:': new https.Agent({ keepAlive: true }),
  };
  const nodeFetch = (input: string | URL | Request, init: RequestInit = {}): Promise<NodeHttpResponse> => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.reject(new TypeError(`fetch failed: unsupported protocol ${url.protocol}`));
    let sent: string | Uint8Array | undefined;
    try {
      sent = requestBody(init.body);
    } catch (error) {
      return Promise.reject(error);
    }
    const signal = init.signal ?? undefined;
    if (signal?.aborted === true) return Promise.reject(abortError(signal));
    const headers: Record<string, string> = {};
    // The SDKs pass a `Headers` already: read as it is, not copied into another first.
    const given = init.headers instanceof Headers ? init.headers : new Headers(init.headers);
    given.forEach((value, name) => {
      headers[name] = value;
    });
    const client = url.protocol === 'https:' ? https : http;
    return new Promise<NodeHttpResponse>((resolve, reject) => {
      const request = client.request(url, { method: init.method ?? 'GET', headers, agent: agents[url.protocol as 'http:' | 'https:'] });
      let body: Readable | null = null;
      const onAbort = () => {
        // Before the response: the request fails with the reason. After it: the body does.
        if (body === null) request.destroy(abortError(signal!));
        else {
          body.destroy(abortError(signal!));
          request.destroy();
        }
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      request.on('error', (error) => {
        signal?.removeEventListener('abort', onAbort);
        reject(error.name === 'AbortError' || signal?.aborted === true ? abortError(signal!) : new TypeError('fetch failed', { cause: error }));
      });
      request.on('response', (response) => {
        // An abort from here on errors the body; the listener goes with the body's end.
        response.once('close', () => signal?.removeEventListener('abort', onAbort));
        const answer = toResponse(url, response);
        body = answer.body;
        resolve(answer);
      });
      request.end(sent);
    });
  };
  return nodeFetch as unknown as typeof fetch;
}

function requestBody(body: RequestInit['body']): string | Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new TypeError('fetch failed: this fetch sends string and byte bodies only (LLM_HTTP_CLIENT=fetch sends any)');
}

function toResponse(url: URL, response: http.IncomingMessage): NodeHttpResponse {
  const headers = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  const body = decoded(response);
  const status = response.statusCode ?? 0;
  const bytes = async (): Promise<Buffer> => {
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };
  return {
    ok: status >= 200 && status < 300,
    status,
    statusText: response.statusMessage ?? '',
    url: url.href,
    redirected: false,
    headers,
    body,
    text: async () => (await bytes()).toString('utf8'),
    json: async () => JSON.parse((await bytes()).toString('utf8')) as unknown,
    arrayBuffer: async () => {
      const buffer = await bytes();
      return buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) as ArrayBuffer;
    },
  };
}

/** The body, decompressed as `fetch` would when the server encoded it anyway. */
function decoded(response: http.IncomingMessage): Readable {
  const encoding = String(response.headers['content-encoding'] ?? '').trim().toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip' ? zlib.createGunzip() : encoding === 'deflate' ? zlib.createInflate() : encoding === 'br' ? zlib.createBrotliDecompress() : null;
  if (decoder === null) return response;
  response.on('error', (error) => decoder.destroy(error));
  return response.pipe(decoder);
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException('This operation was aborted', 'AbortError');
}
