/**
 * A provider that refuses a key may quote it in its error body (OpenAI's 401 says "Incorrect API key
 * provided: sk-…"). The adapters take every configured secret out of their errors before they leave
 * (README, "Secrets"): over the real SDKs against the fake servers, the error an adapter throws, the
 * fallback's switch and final error, and what a real run (an in-process worker on Postgres and Redis)
 * stores and streams carry no key.
 */
import { describe, expect, it } from 'vitest';
import { classifyLlmError } from '../../../src/core/retry/index.js';
import type { LlmFallbackInfo } from '../../../src/core/ports/llm.js';
import { AnthropicLlm } from '../../../src/llm/anthropic/index.js';
import { FallbackLlm } from '../../../src/llm/fallback-llm.js';
import { OpenAiLlm } from '../../../src/llm/openai/index.js';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { llmRequest } from '../../support/fake-openai/llm-request.js';
import { errorResponse } from '../../support/fake-openai-server.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { useFakeProviderServers } from './fake-provider-servers.js';

const OPENAI_KEY = 'sk-proj-Quoted0penAiKey42';
const ANTHROPIC_KEY = 'sk-ant-api03-QuotedAnthropicKey7';
const KEYS = [OPENAI_KEY, ANTHROPIC_KEY];

const servers = useFakeProviderServers();
const live = () => new AbortController().signal;
const failure = (promise: Promise<unknown>) => promise.then(() => expect.fail('expected the call to fail'), (error: unknown) => error);

/** Every string an error holds: its message, stack and fields, its causes and what they hold. */
function everyText(value: unknown, seen = new Set<object>()): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value !== 'object' || value === null || seen.has(value)) return [];
  seen.add(value);
  return Reflect.ownKeys(value).flatMap((key) => everyText(Reflect.getOwnPropertyDescriptor(value, key)?.value, seen));
}

function expectNoKey(texts: readonly string[]): void {
  for (const key of KEYS) expect(texts.filter((text) => text.includes(key))).toEqual([]);
}

const openai = () => new OpenAiLlm({ apiKey: OPENAI_KEY, baseUrl: servers.openai.url, model: 'gpt-4o-mini', timeoutMs: 10_000, secrets: KEYS });
const anthropic = () => new AnthropicLlm({ apiKey: ANTHROPIC_KEY, baseUrl: servers.anthropic.url, model: 'claude-test', timeoutMs: 10_000, secrets: KEYS });

describe('a 401 that quotes the key', () => {
  it('OpenAI: the adapter throws the SDK error, still a 401, without the key', async () => {
    servers.openai.enqueue(errorResponse(401, { message: `Incorrect API key provided: ${OPENAI_KEY}. You can find your API key at …` }));
    const error = await failure(openai().complete(llmRequest(), { signal: live() }));
    expect(classifyLlmError(error)).toEqual({ retryable: false, reason: 'http_status', status: 401 });
    expect((error as Error).message).toContain('Incorrect API key provided: [redacted].');
    expectNoKey(everyText(error));
  });

  it('Anthropic: the adapter throws the SDK error, still a 401, without the key', async () => {
    servers.anthropic.push({ kind: 'error', status: 401, message: `invalid x-api-key: ${ANTHROPIC_KEY}` });
    const error = await failure(anthropic().complete(llmRequest(), { signal: live() }));
    expect(classifyLlmError(error)).toEqual({ retryable: false, reason: 'http_status', status: 401 });
    expect((error as Error).message).toContain('invalid x-api-key: [redacted]');
    expectNoKey(everyText(error));
  });

  it("the fallback: neither the switch's message nor the final error carries a key, even one the other provider quotes", async () => {
    servers.openai.enqueue(errorResponse(401, { message: `Incorrect API key provided: ${OPENAI_KEY}` }));
    servers.anthropic.push({ kind: 'error', status: 401, message: `invalid x-api-key ${ANTHROPIC_KEY} (a proxy also saw ${OPENAI_KEY})` });
    const switches: LlmFallbackInfo[] = [];
    const llm = new FallbackLlm([openai(), anthropic()], { secrets: KEYS });
    const error = await failure(llm.complete(llmRequest(), { signal: live(), handlers: { onFallback: (info) => switches.push(info) } }));
    expect(switches).toMatchObject([{ from: 'openai:gpt-4o-mini', to: 'anthropic:claude-test', errorMessage: expect.stringContaining('[redacted]') as unknown }]);
    expectNoKey([...everyText(switches), ...everyText(error)]);
  });
});

describe('a real run whose providers both answer 401 quoting the keys (in-process worker, Postgres, Redis)', () => {
  it('stores and streams no key: the input, its result and error, the history, every event and job', async () => {
    const fleet = await FleetFixture.create('provider_secrets', {
      LLM_PROVIDER: 'openai',
      OPENAI_API_KEY: OPENAI_KEY,
      OPENAI_BASE_URL: servers.openai.url,
      ANTHROPIC_API_KEY: ANTHROPIC_KEY,
      ANTHROPIC_BASE_URL: servers.anthropic.url,
      LLM_FALLBACK: 'anthropic:claude-test',
    });
    try {
      await fleet.startWorker();
      // The Anthropic server keeps its requests across the file's tests.
      const anthropicBefore = servers.anthropic.requests.length;
      servers.openai.enqueue(errorResponse(401, { message: `Incorrect API key provided: ${OPENAI_KEY}` }));
      servers.anthropic.push({ kind: 'error', status: 401, message: `invalid x-api-key ${ANTHROPIC_KEY}; also seen: ${OPENAI_KEY}` });
      const sessionId = 'refused-keys';
      await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: 'hello' } });
      const [input] = await fleet.waitForSessionFinished(sessionId, 1);
      // The run did meet both refusals and ended on them.
      expect(servers.openai.requests).toHaveLength(1);
      expect(servers.anthropic.requests).toHaveLength(anthropicBefore + 1);
      expect(input).toMatchObject({ errorCode: 'llm.non_retryable', result: { status: 'degraded' } });

      const stored: string[] = [];
      for (const [table, column] of [['sessions', 'id'], ['session_inputs', 'session_id'], ['messages', 'session_id'], ['tool_calls', 'session_id'], ['usage_rounds', 'session_id'], ['compactions', 'session_id'], ['timers', 'session_id']] as const) {
        const rows = await fleet.pool.query<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM ${table} t WHERE ${column} = $1`, [sessionId]);
        stored.push(...rows.rows.map((row) => row.row));
      }
      expect(stored.length).toBeGreaterThan(2);
      expectNoKey(stored);

      const streamed = await fleetRedisText(fleet);
      expect(streamed.some((text) => text.includes('input_finished'))).toBe(true);
      expectNoKey(streamed);
      // What the refusals said is kept, less the keys.
      expect(input?.errorMessage).toContain('invalid x-api-key [redacted]; also seen: [redacted]');
    } finally {
      await fleet.close();
    }
  }, 60_000);
});

/** Every value of every key of the fleet's queue in Redis: the session streams, BullMQ's jobs and events. */
async function fleetRedisText(fleet: FleetFixture): Promise<string[]> {
  const texts: string[] = [];
  for (const pattern of [`${fleet.config.queueName}:*`, `bull:${fleet.config.queueName}:*`]) {
    let cursor = '0';
    do {
      const [next, keys] = await fleet.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      for (const key of keys) texts.push(key, ...(await valuesOf(fleet, key)));
    } while (cursor !== '0');
  }
  return texts;
}

async function valuesOf(fleet: FleetFixture, key: string): Promise<string[]> {
  const { redis } = fleet;
  switch (await redis.type(key)) {
    case 'string':
      return [(await redis.get(key)) ?? ''];
    case 'hash':
      return Object.entries(await redis.hgetall(key)).flat();
    case 'list':
      return redis.lrange(key, 0, -1);
    case 'set':
      return redis.smembers(key);
    case 'zset':
      return redis.zrange(key, 0, -1);
    case 'stream':
      return (await redis.xrange(key, '-', '+')).flatMap(([, fields]) => fields);
    default:
      return [];
  }
}
