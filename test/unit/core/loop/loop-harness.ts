import { InfrastructureError } from '../../../../src/core/errors/index.js';
import type { ChildrenPort } from '../../../../src/core/ports/children.js';
import { expect } from 'vitest';
import { resolveAgentProfile, type AgentProfile } from '../../../../src/core/agent-profile.js';
import { protocolViolations } from '../../../../src/core/history/index.js';
import { HookRegistry } from '../../../../src/core/hooks/index.js';
import { runInput } from '../../../../src/core/loop/run-input.js';
import type { LoopDeps } from '../../../../src/core/loop/run-context.js';
import type { Message } from '../../../../src/core/messages.js';
import type { Clock } from '../../../../src/core/ports/clock.js';
import type { Llm } from '../../../../src/core/ports/llm.js';
import type { SessionStore, StepCommit, StepCommitResult } from '../../../../src/core/ports/session-store.js';
import { resolveRetryPolicy } from '../../../../src/core/retry/index.js';
import type { InputKind, InputMode, InputResult } from '../../../../src/core/session-types.js';
import { ToolRegistry, type AnyToolDefinition } from '../../../../src/core/tools/index.js';
import { CollectingSink } from '../../../support/fakes/collecting-sink.js';
import { InMemorySessionStore } from '../../../support/fakes/in-memory-session-store.js';

/** A tool that answers with its `text` argument (the loop tests' common tool). */
export const echoTool = {
  name: 'echo',
  description: 'Echo the text back',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
  execute: (args: { text: string }) => `echo: ${args.text}`,
};

/** A clock whose sleeps resolve at once (retry backoff in unit tests costs nothing). */
export const instantClock: Clock = {
  now: () => Date.now(),
  sleep: async (_ms, signal) => {
    if (signal?.aborted === true) throw signal.reason;
  },
};

export interface HarnessOptions {
  llm: Llm;
  tools?: AnyToolDefinition[];
  profile?: Partial<AgentProfile>;
  store?: SessionStore;
  sessionId?: string;
  clock?: Clock;
  /** Starts child sessions for `spawn_agent`; without it the tool is not run by the loop. */
  children?: ChildrenPort;
}

/** Everything a loop test needs: ports wired to fakes, and helpers to add and run inputs. */
export class LoopHarness {
  readonly store: SessionStore;
  readonly sink = new CollectingSink();
  readonly hooks = new HookRegistry();
  readonly sessionId: string;
  readonly deps: LoopDeps;
  readonly observerErrors: unknown[] = [];

  constructor(options: HarnessOptions) {
    this.store = options.store ?? new InMemorySessionStore();
    this.sessionId = options.sessionId ?? 's1';
    this.deps = {
      store: this.store,
      llm: options.llm,
      tools: ToolRegistry.from(options.tools ?? []),
      hooks: this.hooks,
      sink: this.sink,
      clock: options.clock ?? instantClock,
      profile: resolveAgentProfile(options.profile),
      retryPolicy: resolveRetryPolicy({ maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 2, totalTimeoutMs: null }),
      onObserverError: (error) => this.observerErrors.push(error),
      random: () => 0.5,
    };
    if (options.children !== undefined) this.deps.children = options.children;
  }

  async add(kind: InputKind, payload: Record<string, unknown>, mode: InputMode = 'queue', inputId?: string): Promise<number> {
    const accepted = await this.store.acceptInput({ sessionId: this.sessionId, kind, mode, payload, maxBytes: 1 << 20, ...(inputId ? { inputId } : {}) });
    return accepted.seq;
  }

  send(text: string, options?: Record<string, unknown>, mode: InputMode = 'queue'): Promise<number> {
    return this.add('send', options === undefined ? { input: text } : { input: text, options }, mode);
  }

  /** Takes the lease, claims the next input and runs it; returns null when nothing is pending. */
  async runNext(signal: AbortSignal = new AbortController().signal): Promise<InputResult | null> {
    const lease = await this.store.acquireLease({ sessionId: this.sessionId, owner: 'test', ttlMs: 60_000 });
    if (!lease.acquired) throw new Error('lease busy');
    try {
      const claimed = await this.store.claimNextInput({ sessionId: this.sessionId, leaseToken: lease.token });
      if (claimed === null) return null;
      const { input, resumed, woken, pendingInputs, pendingSteers } = claimed;
      return await runInput(this.deps, { sessionId: this.sessionId, leaseToken: lease.token, input, resumed, woken, pendingInputs, pendingSteers, signal });
    } finally {
      await this.store.releaseLease({ sessionId: this.sessionId, token: lease.token });
    }
  }

  async history(includeCompacted = false): Promise<Message[]> {
    return (await this.store.loadHistory(this.sessionId, { includeCompacted })).map((row) => row.message);
  }
}

/**
 * A clock for runs with asynchronous tools: short sleeps (retry backoff) resolve at once, long ones
 * (tool timeouts, deadlines) wait until their signal aborts. With `instantClock` every tool timeout
 * would fire at once, so a tool that awaits anything would time out.
 */
export const patientClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted === true) return reject(signal.reason);
      if (ms < 1000) return resolve();
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
    }),
};

/** A promise with its resolver, for holding a call until a test releases it. */
export interface Deferred<T = void> {
  promise: Promise<T>;
  resolve(value: T): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

/** What a "crashed" store throws: the process is gone, nothing more is written. */
/** A dead process's store: an infrastructure failure, so the loop stops without finishing the input. */
export class StoreCrashed extends InfrastructureError {
  constructor() {
    super('store crashed');
  }
}

/** A store whose step commits can be made to fail from a chosen point on, as if the worker died there. */
export interface CrashableStore extends SessionStore {
  /** Every commit after the next `commits` successful ones throws. */
  crashAfter(commits: number): void;
}

export function crashable(inner: SessionStore): CrashableStore {
  let budget = Number.POSITIVE_INFINITY;
  const commitStep = async (step: StepCommit): Promise<StepCommitResult> => {
    if (budget <= 0) throw new StoreCrashed();
    budget -= 1;
    return inner.commitStep(step);
  };
  return new Proxy(inner, {
    get(target, property) {
      if (property === 'crashAfter') return (commits: number) => (budget = commits);
      if (property === 'commitStep') return commitStep;
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  }) as CrashableStore;
}

/**
 * Runs the next input and checks what must hold after every finished run: exactly one new
 * `session_ended` (none when nothing ran) and a protocol-valid history (I4) — with the open question
 * of a `waiting_for_input` run allowed at its end.
 */
export async function runChecked(harness: LoopHarness, signal?: AbortSignal): Promise<InputResult | null> {
  const endedBefore = harness.sink.ofType('session_ended').length;
  const result = await harness.runNext(signal);
  expect(harness.sink.ofType('session_ended').length - endedBefore, 'session_ended events of this run').toBe(result === null ? 0 : 1);
  const allowTrailingPending = (await harness.store.getSession(harness.sessionId))?.pending != null;
  expect(protocolViolations(await harness.history(), { allowTrailingPending })).toEqual([]);
  return result;
}
