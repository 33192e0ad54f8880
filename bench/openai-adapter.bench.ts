/**
 * What the OpenAI adapter costs against the SDK alone. The fake server streams one response of CHUNKS
 * text deltas; each run times (a) the raw SDK iterating the stream and concatenating the deltas and
 * (b) `OpenAiLlm.complete` with stream handlers over the same stream (which reads the body's events
 * itself, `src/llm/sse-events.ts`, so a ratio below 1 is its saving over the SDK's stream decoder). After a warm-up of each, the
 * two are timed in pairs, alternating which goes first; the medians are reported.
 *
 * Run: `npx tsx bench/openai-adapter.bench.ts` — prints the JSON and writes bench/results/openai-adapter.json.
 */
import OpenAI from 'openai';
import { OpenAiLlm } from '../src/llm/openai/index.js';
import { FakeOpenAiServer, textStream } from '../test/support/fake-openai-server.js';
import { llmRequest } from '../test/support/fake-openai/llm-request.js';
import { measureAdapterOverhead } from './lib/adapter-overhead.js';

const CHUNKS = 2000;
const RUNS = 7;
const MODEL = 'gpt-4o-mini';

/** Deltas of a few characters, like real token-sized chunks. */
const parts = Array.from({ length: CHUNKS }, (_, index) => `tok${index % 10} `);
const expectedText = parts.join('');

async function rawSdkRun(client: OpenAI): Promise<number> {
  const started = performance.now();
  const stream = await client.chat.completions.create({
    model: MODEL,
    messages: [{ role: 'user', content: 'hi' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  const elapsed = performance.now() - started;
  if (text !== expectedText) throw new Error('raw SDK run: wrong text');
  return elapsed;
}

async function adapterRun(llm: OpenAiLlm): Promise<number> {
  let deltas = 0;
  const started = performance.now();
  const response = await llm.complete(llmRequest({ systemPrompt: null }), {
    signal: new AbortController().signal,
    handlers: { onTextDelta: () => (deltas += 1) },
  });
  const elapsed = performance.now() - started;
  if (response.text !== expectedText || deltas !== CHUNKS) throw new Error('adapter run: wrong text');
  return elapsed;
}

async function main(): Promise<void> {
  const server = new FakeOpenAiServer();
  const { url, close } = await server.start();
  try {
    const client = new OpenAI({ apiKey: 'sk-bench', baseURL: url, maxRetries: 0, logLevel: 'off' });
    const llm = new OpenAiLlm({ apiKey: 'sk-bench', baseUrl: url, model: MODEL, timeoutMs: 60_000 });
    await measureAdapterOverhead({
      name: 'openai-adapter',
      chunks: CHUNKS,
      runs: RUNS,
      warmup: 1,
      prepare: () => server.enqueue(textStream(parts), textStream(parts)),
      raw: () => rawSdkRun(client),
      adapter: () => adapterRun(llm),
    });
  } finally {
    await close();
  }
}

await main();
