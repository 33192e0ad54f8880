/**
 * The `fetch` both adapters hand their SDK: the given one (or the global one, looked up per call),
 * except that an error answer's body is read to its end before the SDK sees the response.
 *
 * On an error status the SDKs read the whole body (`response.text()`) before they throw, with no
 * bound: their `timeout` covers only the `fetch` call, and the stream guard watches only a streamed
 * answer's body. A server or proxy that sends an error status and then goes silent would hold the
 * call, and the session's lease, for good. Read here, inside the `fetch` the SDK times, the body falls
 * under the SDK's `timeout` (counted from the request's start): when it fires, or the caller aborts,
 * the read stops and the SDK gets the status with what had arrived. The status is what classifies
 * the error (a 400 is not retried, a 503 is), so it is kept even when the body is cut short.
 */

/** Wraps `inner` (default: the global `fetch`, looked up at each call). */
export function bufferErrorBody(inner?: typeof fetch): typeof fetch {
  const buffering = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const response = await (inner ?? globalThis.fetch)(input, init);
    if (response.ok || response.body === null || response.body === undefined) return response;
    return bufferedResponse(response, await readUntilStopped(response.body as unknown as AsyncIterable<Uint8Array>));
  };
  return buffering as typeof fetch;
}

/** The body's bytes up to its end, or up to the error that cut it (an abort, a reset): what arrived. */
async function readUntilStopped(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of body) chunks.push(Buffer.from(chunk));
  } catch {
    // The SDKs treat a failed error-body read the same way: the status with what could be read.
  }
  return Buffer.concat(chunks);
}

/**
 * The answer again, its body now in memory: a real `Response` (so `clone()`, which the Anthropic SDK's
 * middleware `parse()` uses, works too) with the status, status text and headers; `url` kept. A status
 * `Response` refuses (outside 200–599, from an odd proxy) gets a plain object with what the SDKs read
 * of an error answer instead.
 */
function bufferedResponse(response: Response, bytes: Buffer): Response {
  const init = { status: response.status, statusText: response.statusText, headers: response.headers };
  let buffered: Response;
  try {
    buffered = new Response(bytes.byteLength === 0 ? null : bytes, init);
  } catch {
    return plainResponse(response, bytes);
  }
  Object.defineProperty(buffered, 'url', { value: response.url });
  return buffered;
}

function plainResponse(response: Response, bytes: Buffer): Response {
  const text = bytes.toString('utf8');
  const plain = {
    ok: response.ok,
    status: response.status,
    statusText: response.statusText,
    url: response.url,
    redirected: response.redirected,
    headers: response.headers,
    body: null,
    bodyUsed: false,
    text: () => Promise.resolve(text),
    json: () => Promise.resolve().then(() => JSON.parse(text) as unknown),
    arrayBuffer: () => Promise.resolve(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)),
  };
  return plain as unknown as Response;
}
