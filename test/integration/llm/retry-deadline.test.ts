/**
 * The retry policy's total deadline with the real adapters (real SDKs, fake servers): it bounds
 * retrying, never an attempt that is still streaming; a stalled attempt is ended by the adapter's
 * idle guard (`LLM_REQUEST_TIMEOUT_MS`, here `timeoutMs`). The policy runs on a manual clock, moved
 * past the deadline from inside the stream (on its first text delta), so no test waits on time.
 */
import { describe, expect, it } from 'vitest';
import { LlmTimeoutError, LlmTransientError } from '../../../src/core/errors/index.js';
import type { Llm } from '../../../src/core/ports/llm.js';
import { resolveRetryPolicy, runWithRetry } from '../../../src/core/retry/index.js';
import { AnthropicLlm } from '../../../src/llm/anthropic/index.js';
import { OpenAiLlm } from '../../../src/llm/openai/index.js';
import { textStep } from '../../support/fake-anthropic-server.js';
import { llmRequest } from '../../support/fake-openai/llm-request.js';
import { textStream } from '../../support/fake-openai-server.js';
import { ManualClock } from '../../unit/core/retry/manual-clock.js';
import { useFakeProviderServers } from './fake-provider-servers.js';

const servers = useFakeProviderServers();
const { openai } = servers;
const TOTAL_TIMEOUT_MS = 1_000;

interface Provider {
  /** An adapter whose idle guard fires after `timeoutMs` without data. */
  llm(timeoutMs: number): Llm;
  /** Queues a reply streaming `parts`; with `hang`, the stream stops after the first part and stays open. */
  reply(parts: string[], hang?: boolean): void;
  /** Requests the fake server has received so far. */
  requests(): number;
}

const providers: Record<'openai' | 'anthropic', Provider> = {
  openai: {
    llm: (timeoutMs) => new OpenAiLlm({ apiKey: 'sk-test', baseUrl: openai.url, model: 'gpt-4o-mini', timeoutMs }),
    reply: (parts, hang) => openai.enqueue(textStream(parts, hang === true ? { cut: { afterEvents: 1, how: 'hang' } } : {})),
    requests: () => openai.requests.length,
  },
  anthropic: {
    llm: (timeoutMs) => new AnthropicLlm({ apiKey: 'sk-ant-test', baseUrl: servers.anthropic.url, model: 'claude-test', timeoutMs }),
    // Frames: message_start, content_block_start, ping, the first delta: hang after it.
    reply: (parts, hang) => servers.anthropic.push(hang === true ? Object.assign(textStep(parts), { fault: { kind: 'hang' as const, afterFrames: 4 } }) : textStep(parts)),
    requests: () => servers.anthropic.requests.length,
  },
};

/** One call under a 1 s total deadline; the clock passes the deadline when the first text arrives. */
function callPastDeadline(llm: Llm): { result: Promise<unknown>; text: string[] } {
  const clock = new ManualClock();
  const text: string[] = [];
  const policy = resolveRetryPolicy({ totalTimeoutMs: TOTAL_TIMEOUT_MS, initialDelayMs: 1, maxDelayMs: 1, jitter: 0 });
  const handlers = {
    onTextDelta: (delta: string) => {
      if (text.length === 0) clock.advance(10 * TOTAL_TIMEOUT_MS);
      text.push(delta);
    },
  };
  const result = runWithRetry((_attempt, signal) => llm.complete(llmRequest(), { signal, handlers }), { policy, clock }).catch((caught: unknown) => caught);
  return { result, text };
}

describe.each(['openai', 'anthropic'] as const)('the total deadline with the %s adapter', (name) => {
  const provider = providers[name];

  it('an answer still streaming when the deadline passes is not cut: it completes', async () => {
    const before = provider.requests();
    provider.reply(['one ', 'two ', 'three']);
    const { result, text } = callPastDeadline(provider.llm(10_000));
    expect(await result).toMatchObject({ text: 'one two three' });
    expect(text.join('')).toBe('one two three');
    expect(provider.requests() - before).toBe(1);
  });

  it('a stream that hangs is ended by the idle guard, and no attempt starts after the deadline', async () => {
    const before = provider.requests();
    provider.reply(['first', 'never'], true);
    const { result, text } = callPastDeadline(provider.llm(300));
    const error = await result;
    expect(text).toEqual(['first']);
    expect(error).toBeInstanceOf(LlmTimeoutError);
    // The stall, not the deadline, ended the attempt: the policy then gave up instead of retrying.
    expect((error as LlmTimeoutError).cause).toBeInstanceOf(LlmTransientError);
    expect(((error as LlmTimeoutError).cause as LlmTransientError).details.reason).toBe('stalled');
    expect(provider.requests() - before).toBe(1);
  });
});
