/**
 * The poison-input stop (`giveUpInput`) and the session's stats, as one suite that runs against the
 * in-memory store (test/unit/worker) and the Postgres store (test/integration/fleet): a given-up
 * input's result — and so the session's stats and its `input_finished` — carries what its attempts
 * recorded, added exactly once, whether the give-up is retried or races a takeover.
 */
import { describe, expect, it } from 'vitest';
import type { SessionStore } from '../../src/core/ports/session-store.js';
import type { SessionStats, Usage } from '../../src/core/session-types.js';
import type { FleetEvent } from '../../src/fleet/fleet-events.js';
import { createLogger } from '../../src/observability/logger.js';
import { readSessionStats } from '../../src/producer/session-stats.js';
import { giveUpInput } from '../../src/worker/give-up-input.js';
import type { WorkerContext } from '../../src/worker/worker-context.js';
import { WorkerMetrics } from '../../src/worker/worker-metrics.js';

/** What a suite run needs: the store, a way to make a session's lease lapse, and unique ids. */
export interface GiveUpScenarioContext {
  readonly store: SessionStore;
  /** Makes the session's current lease lapse (as a holder that died), so another may take it. */
  lapse(sessionId: string): Promise<void>;
  id(label: string): string;
}

/** What the dead holder's two rounds recorded for input 1 (see {@link spentAndAbandoned}). */
export const RECORDED_USAGE: Usage = { promptTokens: 300, completionTokens: 50, cachedTokens: 10, cacheWriteTokens: 0, reasoningTokens: 5, totalTokens: 350, llmCalls: 3, costUsd: 0, costPicoUsd: 0 };

/**
 * The session totals after the given-up input 1, and nothing else, finished. Its tool call is not
 * counted: the give-up reads the input's usage rows, never its window (which may be what killed it).
 */
export const GIVEN_UP_TOTALS: Omit<SessionStats, 'firstInputAt' | 'lastInputAt'> = Object.assign({ inputs: 1, rounds: 2, toolCalls: 0 }, RECORDED_USAGE);

/** The `input_finished` events a give-up published, by input seq. */
export interface PublishedFinishes {
  events: { inputSeq: number | null; event: FleetEvent }[];
}

/** A worker context with what `giveUpInput` uses: the store, a collecting publisher, a silent logger. */
export function giveUpContext(store: SessionStore, published: PublishedFinishes): WorkerContext {
  const publisher = {
    publish: async (_sessionId: string, inputSeq: number | null, event: FleetEvent) => {
      published.events.push({ inputSeq, event });
      return `${published.events.length}-0`;
    },
  };
  return {
    store,
    publisher,
    settings: { maxInputAttempts: 1 },
    metrics: new WorkerMetrics({ queueName: 'give-up', concurrency: 1, isTool: () => false, events: () => ({ published: 0, dropped: 0, fenced: 0 }) }),
    logger: createLogger({ level: 'silent', format: 'json', redactContent: true }),
    // A running worker: publishFinish bounds its wait only once these abort.
    stopping: new AbortController().signal,
    shutdown: new AbortController().signal,
  } as unknown as WorkerContext;
}

/**
 * A session whose input 1 was run by a holder that died in its second round: round 0 (two LLM calls
 * — a retry — and a tool call, answered) and round 1 (asking another tool) are recorded, the input is
 * still `running`, and the dead holder's lease has lapsed. Returns the dead holder's token.
 */
export async function spentAndAbandoned(ctx: GiveUpScenarioContext, sessionId: string): Promise<number> {
  const { store } = ctx;
  await store.acceptInput({ sessionId, kind: 'send', payload: { input: 'look it up' }, maxBytes: 10_000 });
  const { token: leaseToken } = await takeOver(store, sessionId, 'dead-worker');
  const usage = (round: number, values: Usage) => Object.assign({ inputSeq: 1, round, provider: 'openai', model: 'gpt-test' }, values);
  await store.commitStep({
    sessionId,
    leaseToken,
    messages: [
      { inputSeq: 1, round: 0, message: { role: 'user', content: 'look it up' } },
      { inputSeq: 1, round: 0, message: { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }] } },
    ],
    usageRounds: [usage(0, { promptTokens: 100, completionTokens: 20, cachedTokens: 10, cacheWriteTokens: 0, reasoningTokens: 5, totalTokens: 120, llmCalls: 2, costUsd: 0, costPicoUsd: 0 })],
  });
  await store.commitStep({
    sessionId,
    leaseToken,
    messages: [
      { inputSeq: 1, round: 0, message: { role: 'tool', content: 'found', toolCallId: 'c1', name: 'lookup' } },
      { inputSeq: 1, round: 1, message: { role: 'assistant', content: '', toolCalls: [{ id: 'c2', name: 'lookup', arguments: '{}' }] } },
    ],
    usageRounds: [usage(1, { promptTokens: 200, completionTokens: 30, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 230, llmCalls: 1, costUsd: 0, costPicoUsd: 0 })],
  });
  await ctx.lapse(sessionId);
  return leaseToken;
}

/** Takes the session's free or lapsed lease and claims input 1 (again: one more attempt). */
export async function takeOver(store: SessionStore, sessionId: string, owner: string) {
  const lease = await store.acquireLease({ sessionId, owner, ttlMs: 60_000 });
  if (!lease.acquired) throw new Error(`${owner} did not get the lease of ${sessionId}`);
  const claimed = await store.claimNextInput({ sessionId, leaseToken: lease.token });
  if (claimed?.input.seq !== 1) throw new Error(`${owner} did not claim input 1 of ${sessionId}`);
  return { token: lease.token, input: claimed.input };
}

/** The session's totals, without the time stamps. */
export async function totals(store: SessionStore, sessionId: string): Promise<Omit<SessionStats, 'firstInputAt' | 'lastInputAt'>> {
  const { firstInputAt: _first, lastInputAt: _last, ...counts } = (await readSessionStats(store, sessionId)).totals;
  return counts;
}

/** Declares the give-up scenarios against the store of `ctx` (valid inside tests). */
export function giveUpScenarios(name: string, ctx: GiveUpScenarioContext): void {
  describe(name, () => {
    it('a given-up input adds the rounds and usage its attempts recorded to the session stats, and its input_finished reports them', async () => {
      const sessionId = ctx.id('give-up-stats');
      await spentAndAbandoned(ctx, sessionId);
      const heir = await takeOver(ctx.store, sessionId, 'heir');
      expect(heir.input.attempts).toBe(2);
      const published: PublishedFinishes = { events: [] };
      const result = await giveUpInput(giveUpContext(ctx.store, published), sessionId, heir.token, heir.input, 'default');

      expect(result).toMatchObject({ status: 'failed', rounds: 2, toolCalls: 0, usage: RECORDED_USAGE });
      expect(await totals(ctx.store, sessionId)).toEqual(GIVEN_UP_TOTALS);
      expect(await ctx.store.getInput(sessionId, 1)).toMatchObject({ status: 'failed', errorCode: 'system.infrastructure', result: { rounds: 2, toolCalls: 0, usage: RECORDED_USAGE } });
      expect(published.events).toHaveLength(1);
      expect(published.events[0]).toMatchObject({ inputSeq: 1, event: { type: 'input_finished', status: 'failed', rounds: 2, toolCalls: 0, usage: RECORDED_USAGE } });
    });

    it('gives up without reading the window (it may be what killed every holder): a store that cannot load it still ends the input', async () => {
      const sessionId = ctx.id('give-up-no-window');
      await spentAndAbandoned(ctx, sessionId);
      const heir = await takeOver(ctx.store, sessionId, 'heir');
      const refuse = (): never => {
        throw new Error('the window is not readable');
      };
      const refused = new Set<PropertyKey>(['loadRunState', 'loadWindow', 'loadHistory']);
      const store = new Proxy(ctx.store, {
        get: (target, key) => (refused.has(key) ? refuse : (target[key as keyof SessionStore] as (...args: unknown[]) => unknown).bind(target)),
      });
      const published: PublishedFinishes = { events: [] };
      const result = await giveUpInput(giveUpContext(store, published), sessionId, heir.token, heir.input, 'default');
      expect(result).toMatchObject({ status: 'failed', rounds: 2, usage: RECORDED_USAGE });
      expect(await ctx.store.getInput(sessionId, 1)).toMatchObject({ status: 'failed', errorCode: 'system.infrastructure' });
    });

    it('a give-up retried under the same lease is refused (state.conflict) and adds nothing more', async () => {
      const sessionId = ctx.id('give-up-retried');
      await spentAndAbandoned(ctx, sessionId);
      const heir = await takeOver(ctx.store, sessionId, 'heir');
      const published: PublishedFinishes = { events: [] };
      await giveUpInput(giveUpContext(ctx.store, published), sessionId, heir.token, heir.input, 'default');
      await expect(giveUpInput(giveUpContext(ctx.store, published), sessionId, heir.token, heir.input, 'default')).rejects.toMatchObject({ code: 'state.conflict' });
      expect(await totals(ctx.store, sessionId)).toEqual(GIVEN_UP_TOTALS);
      expect(published.events).toHaveLength(1);
    });

    it('a give-up racing a takeover: the holder whose lease lapsed is refused (lease.lost), the new holder adds the usage once', async () => {
      const sessionId = ctx.id('give-up-raced');
      await spentAndAbandoned(ctx, sessionId);
      const stalled = await takeOver(ctx.store, sessionId, 'stalled');
      // The first heir stalls before its give-up; its lease lapses and a second heir takes over.
      await ctx.lapse(sessionId);
      const second = await takeOver(ctx.store, sessionId, 'second');
      expect(second.input.attempts).toBe(3);
      const published: PublishedFinishes = { events: [] };
      await giveUpInput(giveUpContext(ctx.store, published), sessionId, second.token, second.input, 'default');
      await expect(giveUpInput(giveUpContext(ctx.store, published), sessionId, stalled.token, stalled.input, 'default')).rejects.toMatchObject({ code: 'lease.lost' });
      expect(await totals(ctx.store, sessionId)).toEqual(GIVEN_UP_TOTALS);
      expect(published.events.map((entry) => entry.inputSeq)).toEqual([1]);
    });

    it('a holder whose lease lapses right after its give-up: the next holder finds nothing to claim, and the usage was added once', async () => {
      const sessionId = ctx.id('give-up-first');
      await spentAndAbandoned(ctx, sessionId);
      const heir = await takeOver(ctx.store, sessionId, 'heir');
      const published: PublishedFinishes = { events: [] };
      await giveUpInput(giveUpContext(ctx.store, published), sessionId, heir.token, heir.input, 'default');
      await ctx.lapse(sessionId);
      const late = await ctx.store.acquireLease({ sessionId, owner: 'late', ttlMs: 60_000 });
      if (!late.acquired) throw new Error('the late holder did not get the lease');
      expect(await ctx.store.claimNextInput({ sessionId, leaseToken: late.token })).toBeNull();
      expect(await totals(ctx.store, sessionId)).toEqual(GIVEN_UP_TOTALS);
    });
  });
}
