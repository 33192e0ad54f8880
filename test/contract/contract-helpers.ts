/**
 * Builders and probes shared by the `SessionStore` contract scenarios. They use the port only, so
 * whatever they observe is what the loop and the worker would observe.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { Message } from '../../src/core/messages.js';
import type { PendingState } from '../../src/core/pending-state.js';
import type { AgentRegistration, AgentRegistry } from '../../src/core/ports/agent-registry.js';
import type { ChildResultPayload } from '../../src/core/ports/children.js';
import type { AcceptInputParams, SessionStore, SpawnChildParams, ToolCallWrite, UsageRoundWrite } from '../../src/core/ports/session-store.js';
import type { InputResult } from '../../src/core/session-types.js';

/** What a contract factory hands over: the store under test, its clock if it has one, and a closer. */
export interface OpenedStore {
  store: SessionStore;
  /** The agent registry the store checks the agents of creates and accepts against. */
  registry: AgentRegistry;
  /** The clock the store stamps leases and rows with (ms since the epoch). Default `Date.now`. */
  now?: () => number;
  /** Releases everything the factory opened (pools, databases). */
  close(): Promise<void>;
}

export type StoreFactory = () => Promise<OpenedStore>;

/** What every scenario group gets; `store` is valid inside tests (it is opened in `beforeAll`). */
export interface ContractContext {
  readonly store: SessionStore;
  readonly registry: AgentRegistry;
  now(): number;
  /** A session id no other scenario (nor another run against the same database) uses. */
  id(label: string): string;
}

/** Makes the unique-id generator of one contract run. */
export function sessionIds(): (label: string) => string {
  const run = randomBytes(4).toString('hex');
  let counter = 0;
  return (label) => `${label}-${run}-${(counter += 1)}`;
}

/** A registration with made-up fields. */
export function registration(name: string, overrides: Partial<AgentRegistration> = {}): AgentRegistration {
  return { name, version: 'v1', provider: 'openai', model: 'gpt-test', tools: ['current_time'], ...overrides };
}

/** Agent names a live worker of their own serves (registered now); the worker id is returned too. */
export async function servedAgents(ctx: ContractContext, ...names: string[]): Promise<{ workerId: string; names: string[] }> {
  const workerId = `worker-${ctx.id('w')}`;
  const unique = names.map((name) => ctx.id(name));
  await ctx.registry.registerAgents(workerId, unique.map((name) => registration(name)));
  return { workerId, names: unique };
}

/** Slack for comparing store timestamps with the test's clock (a database clock may differ a little). */
export const CLOCK_SLACK_MS = 5_000;

export function user(text: string): Message {
  return { role: 'user', content: text };
}

export function assistant(text: string): Message {
  return { role: 'assistant', content: text };
}

/** Accepts a `send` input with sensible defaults. */
export function accept(store: SessionStore, sessionId: string, overrides: Partial<AcceptInputParams> = {}) {
  return store.acceptInput({ sessionId, kind: 'send', payload: { input: 'hi' }, maxBytes: 10_000, ...overrides });
}

/** A new session with its lease taken. */
export async function leased(ctx: ContractContext, label: string, owner = 'worker-a'): Promise<{ id: string; token: number }> {
  const id = ctx.id(label);
  await ctx.store.createSession({ id });
  const lease = await ctx.store.acquireLease({ sessionId: id, owner, ttlMs: 60_000 });
  if (!lease.acquired) throw new Error(`could not lease ${id}`);
  return { id, token: lease.token };
}

/** A leased session with `inputs` accepted inputs, the first of them claimed (running). */
export async function running(ctx: ContractContext, label: string, inputs = 1): Promise<{ id: string; token: number }> {
  const session = await leased(ctx, label);
  for (let i = 1; i <= inputs; i += 1) await accept(ctx.store, session.id, { inputId: `in-${i}`, payload: { input: `text ${i}` } });
  const claimed = await ctx.store.claimNextInput({ sessionId: session.id, leaseToken: session.token });
  expect(claimed?.input.seq).toBe(1);
  return session;
}

/** Everything the port can show about one session, to prove that a refused call changed nothing. */
export async function snapshot(store: SessionStore, sessionId: string) {
  return {
    session: await store.getSession(sessionId),
    history: await store.loadHistory(sessionId, { includeCompacted: true }),
    inputs: await store.listInputs(sessionId, { limit: 1000 }),
    openToolCalls: await store.loadOpenToolCalls(sessionId),
    usage: await store.getUsageRounds(sessionId),
  };
}

/** Asserts that `promise` rejects with a loopfleet error of this code. */
export async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  await expect(promise).rejects.toMatchObject({ code });
}

export function runResult(overrides: Partial<InputResult> = {}): InputResult {
  return {
    status: 'completed',
    finalText: 'done',
    rounds: 2,
    toolCalls: 3,
    usage: { promptTokens: 100, completionTokens: 20, cachedTokens: 10, cacheWriteTokens: 0, reasoningTokens: 5, totalTokens: 120, llmCalls: 2, costUsd: 0.0000015, costPicoUsd: 1_500_000 },
    ...overrides,
  };
}

export function usageRound(inputSeq: number, round: number, promptTokens: number): UsageRoundWrite {
  return {
    inputSeq,
    round,
    provider: 'openai',
    model: 'gpt-test',
    llmCalls: 1,
    promptTokens,
    completionTokens: 1,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    totalTokens: promptTokens + 1,
  };
}

export function toolCall(toolCallId: string, status: ToolCallWrite['status'], extra: Partial<ToolCallWrite> = {}): ToolCallWrite {
  return { toolCallId, inputSeq: 1, round: 0, name: 'lookup', args: { q: toolCallId }, status, ...extra };
}

/** A pending state asking two tools, one of them a question for a human. */
export const PENDING: PendingState = {
  assistantSeq: 1,
  round: 0,
  inputSeq: 1,
  toolCalls: [
    { id: 'call_1', name: 'lookup', arguments: '{"q":"x"}' },
    { id: 'call_2', name: 'ask', arguments: '{}' },
  ],
  unresolvedIds: ['call_1', 'call_2'],
  interactions: [{ interactionId: 'q1', toolCallId: 'call_2', toolName: 'ask', prompt: 'Which?', options: ['a', 'b'], metadata: { k: 1 } }],
};

/** Polls `attempt` until it returns a value, failing after `timeoutMs` (no fixed sleeps). */
export async function pollUntil<T>(attempt: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await attempt();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A spawn of a child of `parent`'s input `inputSeq` for the call `toolCallId`, the child id derived from both. */
export function spawnRequest(parent: { id: string; token: number }, toolCallId: string, overrides: Partial<SpawnChildParams> = {}): SpawnChildParams {
  return {
    parentSessionId: parent.id,
    leaseToken: parent.token,
    inputSeq: 1,
    toolCallId,
    childSessionId: `${parent.id}:sub:${toolCallId}`,
    agent: 'default',
    task: `do ${toolCallId}`,
    wait: true,
    rootSessionId: parent.id,
    depth: 1,
    maxChildrenPerInput: 10,
    ...overrides,
  };
}

/** A child's outcome as the worker delivers it. */
export function childPayload(childSessionId: string, toolCallId: string, overrides: Partial<ChildResultPayload> = {}): ChildResultPayload {
  return {
    toolCallId,
    childSessionId,
    agent: 'default',
    status: 'completed',
    text: `result of ${toolCallId}`,
    errorCode: null,
    usage: runResult().usage,
    wait: true,
    ...overrides,
  };
}
