import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { gate } from './fixtures/gateway-llm.js';
import { startStreamGateway, token, type StreamGateway } from './fixtures/stream-gateway.js';

let gw: StreamGateway;
let transport: DefaultChatTransport<UIMessage>;

beforeAll(async () => {
  gw = await startStreamGateway('gateway_chat');
  transport = new DefaultChatTransport({ api: `${gw.url}/v1/chat`, headers: gw.auth, fetch });
});
afterAll(async () => gw?.close());

const userMessage = (id: string, text: string): UIMessage => ({ id, role: 'user', parts: [{ type: 'text', text }] });

async function send(chatId: string, message: UIMessage, abortSignal?: AbortSignal): Promise<ReadableStream<UIMessageChunk>> {
  return transport.sendMessages({ chatId, messages: [message], trigger: 'submit-message', messageId: undefined, abortSignal });
}

/** Reads a UI message stream to its end: the message as rebuilt by the AI SDK, and the errors it reported. */
async function rebuild(stream: ReadableStream<UIMessageChunk>, onMessage?: (m: UIMessage) => void): Promise<{ message: UIMessage; errors: unknown[] }> {
  const errors: unknown[] = [];
  let message: UIMessage | undefined;
  for await (const m of readUIMessageStream({ stream, onError: (e) => errors.push(e) })) {
    message = m;
    onMessage?.(m);
  }
  return { message: message!, errors };
}

const textOf = (m: UIMessage) => m.parts.map((p) => (p.type === 'text' ? p.text : '')).join('');

describe('POST /v1/chat', () => {
  it('streams a tool round and an answer that the AI SDK rebuilds into one assistant message', async () => {
    const { message, errors } = await rebuild(await send('chat-tool', userMessage('m1', '[tool] cats')));
    expect(errors).toEqual([]);
    expect(message.id).toBe('chat-tool:1');
    expect(message.role).toBe('assistant');
    expect(message.parts).toMatchObject([
      { type: 'step-start' },
      { type: 'tool-lookup', toolCallId: expect.any(String), state: 'output-available', input: { q: 'cats' }, output: 'result for cats' },
      { type: 'step-start' },
      { type: 'text', text: 'Found: result for cats', state: 'done' },
    ]);
  });

  it('streams reasoning before the text', async () => {
    const { message } = await rebuild(await send('chat-think', userMessage('m1', '[think] yes')));
    expect(message.parts.filter((p) => p.type !== 'step-start')).toMatchObject([
      { type: 'reasoning', text: 'Thinking it over.' },
      { type: 'text', text: 'Answer: yes' },
    ]);
  });

  it('answers the same message for a retry of the same user message id, and runs it once', async () => {
    const first = await rebuild(await send('chat-retry', userMessage('m1', 'hello')));
    const again = await rebuild(await send('chat-retry', userMessage('m1', 'hello')));
    expect(again.message).toEqual(first.message);
    expect(textOf(first.message)).toBe('Echo: hello');
    expect(await gw.queue.sessions.inputs('chat-retry')).toHaveLength(1);
  });

  it('refuses regenerate with 400 input.invalid', async () => {
    const response = await fetch(`${gw.url}/v1/chat`, {
      method: 'POST',
      headers: Object.assign({ 'content-type': 'application/json' }, gw.auth),
      body: JSON.stringify({ id: 'chat-regen', messages: [userMessage('m1', 'x')], trigger: 'regenerate-message', messageId: 'a' }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('input.invalid');
  });
});

describe('GET /v1/chat/:id/stream and /messages', () => {
  it('resumes the running answer mid-way into the same message the first stream gives', async () => {
    const { release, reached } = gw.llm.held('chat');
    onTestFinished(() => release.open());
    const posted = await send('chat-resume', userMessage('m1', '[hold:chat] go'));
    const firstPart = gate();
    const whole = rebuild(posted, (m) => (textOf(m).startsWith('Part one.') ? firstPart.open() : undefined));
    await reached.promise;
    await firstPart.promise;
    // A page reload: the first stream is gone from the client's view; resume picks the answer up.
    const resumed = await transport.reconnectToStream({ chatId: 'chat-resume' });
    expect(resumed).not.toBeNull();
    const again = rebuild(resumed!);
    release.open();
    const [a, b] = await Promise.all([whole, again]);
    expect(textOf(a.message)).toBe('Part one. Part two.');
    expect(b.message).toEqual(a.message);
  });

  it('answers 204 (no stream) when nothing runs', async () => {
    await rebuild(await send('chat-idle', userMessage('m1', 'hi')));
    await gw.fleet.waitForSessionIdle('chat-idle', 1);
    expect(await transport.reconnectToStream({ chatId: 'chat-idle' })).toBeNull();
  });

  it('loads the finished chat as UIMessages matching what was streamed', async () => {
    const streamed = await rebuild(await send('chat-load', userMessage('u-1', '[tool] dogs')));
    await gw.fleet.waitForSessionIdle('chat-load', 1);
    const response = await fetch(`${gw.url}/v1/chat/chat-load/messages`, { headers: gw.auth });
    expect(response.status).toBe(200);
    const messages = (await response.json()) as UIMessage[];
    expect(messages).toHaveLength(2);
    expect(messages[0]).toEqual({ id: 'u-1', role: 'user', parts: [{ type: 'text', text: '[tool] dogs', state: 'done' }] });
    expect(messages[1]!.id).toBe(streamed.message.id);
    expect(streamed.message.parts).toMatchObject(messages[1]!.parts);
  });
});

describe('auth and the OpenAPI document', () => {
  const post = async (authorization: string | null) =>
    fetch(`${gw.url}/v1/chat`, {
      method: 'POST',
      headers: Object.assign({ 'content-type': 'application/json' }, authorization === null ? {} : { authorization }),
      body: JSON.stringify({ id: 'chat-auth', messages: [userMessage('m1', 'x')], trigger: 'submit-message' }),
    });

  it('refuses a chat message without a token (401) or with a read token (403), and a stream outside the sessions claim (403)', async () => {
    expect((await post(null)).status).toBe(401);
    const read = await post(`Bearer ${await token({ tenant: 'default', scope: 'read' })}`);
    expect(read.status).toBe(403);
    expect(((await read.json()) as { error: { code: string } }).error.code).toBe('auth.forbidden');
    const narrow = `Bearer ${await token({ tenant: 'default', scope: 'read', sessions: ['other-*'] })}`;
    const events = await fetch(`${gw.url}/v1/sessions/chat-tool/events`, { headers: { authorization: narrow } });
    expect(events.status).toBe(403);
    const resume = await fetch(`${gw.url}/v1/chat/chat-tool/stream`, { headers: { authorization: narrow } });
    expect(resume.status).toBe(403);
  });

  it('documents the stream routes in /v1/openapi.json', async () => {
    const doc = (await (await fetch(`${gw.url}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, { summary?: string }>> };
    expect(doc.paths['/v1/sessions/{id}/events']?.get?.summary).toBeTruthy();
    expect(doc.paths['/v1/chat']?.post?.summary).toBeTruthy();
    expect(doc.paths['/v1/chat/{id}/stream']?.get?.summary).toBeTruthy();
    expect(doc.paths['/v1/chat/{id}/messages']?.get?.summary).toBeTruthy();
  });
});
