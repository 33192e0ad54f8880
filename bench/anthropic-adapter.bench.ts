/**
 * What the Anthropic adapter costs on top of the SDK. The fake server streams one reply of CHUNKS
 * `text_delta` events; each run times (a) the raw SDK iterating the raw event stream and
 * concatenating the text deltas — the floor — and (b) `AnthropicLlm.complete` with stream handlers
 * over an identical stream. After WARMUP untimed pairs, the two are timed in pairs, alternating which
 * goes first; the medians are reported.
 *
 * Run: `npx tsx bench/anthropic-adapter.bench.ts` — prints the JSON and writes
 * bench/results/anthropic-adapter.json.
 */
import Anthropic from '@anthropic-ai/sdk';
import { AnthropicLlm } from '../src/llm/anthropic/index.js';
import { llmRequest } from '../test/support/fake-anthropic/llm-request.js';
import { startFakeAnthropicServer, textStep } from '../test/support/fake-anthropic-server.js';
import { measureAdapterOverhead } from './lib/adapter-overhead.js';

const CHUNKS = 2000;
const RUNS = 7;
/** Untimed pairs first, so both paths are compiled and the connection pool is warm. */
const WARMUP = 3;
const MODEL = 'claude-bench';
const API_KEY = 'sk-ant-bench';

/** Deltas of a few characters, like real token-sized chunks. */
const parts = Array.from({ length: CHUNKS }, (_, index) => `tok${index % 10} `);
const expectedText = parts.join('');

async function rawSdkRun(client: Anthropic): Promise<number> {
  const started = performance.now();
  const stream = await client.messages.create({ model: MODEL, max_tokens: 4096, messages: [{ role: 'user', content: 'hi' }], stream: true });
  let text = '';
  for await (const event of stream) {
    if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
  }
  const elapsed = performance.now() - started;
  if (text !== expectedText) throw new Error('raw SDK run: wrong text');
  return elapsed;
}

async function adapterRun(llm: AnthropicLlm): Promise<number> {
  let deltas = 0;
  const started = performance.now();
  const response = await llm.complete(llmRequest(), {
    signal: new AbortController().signal,
    handlers: { onTextDelta: () => (deltas += 1) },
  });
  const elapsed = performance.now() - started;
  if (response.text !== expectedText || deltas !== CHUNKS) throw new Error('adapter run: wrong text');
  return elapsed;
}

async function main(): Promise<void> {
  const server = await startFakeAnthropicServer();
  try {
    const client = new Anthropic({ apiKey: API_KEY, baseURL: server.url, maxRetries: 0, logLevel: 'off' });
    const llm = new AnthropicLlm({ apiKey: API_KEY, baseUrl: server.url, model: MODEL, timeoutMs: 60_000 });
    await measureAdapterOverhead({
      name: 'anthropic-adapter',
      chunks: CHUNKS,
      runs: RUNS,
      warmup: WARMUP,
      prepare: () => server.push(textStep(parts), textStep(parts)),
      raw: () => rawSdkRun(client),
      adapter: () => adapterRun(llm),
    });
  } finally {
    await server.close();
  }
}

await main();
