import { expect } from 'vitest';
import { resolveAgentProfile } from '../../../../src/core/agent-profile.js';
import { protocolViolations } from '../../../../src/core/history/index.js';
import { HookRegistry } from '../../../../src/core/hooks/index.js';
import { runInputOutcome } from '../../../../src/core/loop/run-input.js';
import type { LoopDeps } from '../../../../src/core/loop/run-context.js';
import { contentText, type Message } from '../../../../src/core/messages.js';
import type { Llm, LlmCallOptions, LlmRequest, LlmResponse } from '../../../../src/core/ports/llm.js';
import type { SessionStore } from '../../../../src/core/ports/session-store.js';
import { resolveRetryPolicy } from '../../../../src/core/retry/index.js';
import { spawnAgentTool, ToolRegistry, SPAWN_AGENT } from '../../../../src/core/tools/index.js';
import { childSessionId } from '../../../../src/fleet/child-session-id.js';
import { childrenPort, deliverToParent, redeliverToParent } from '../../../../src/worker/child-sessions.js';
import type { WorkerContext } from '../../../../src/worker/worker-context.js';
import { CollectingSink } from '../../../support/fakes/collecting-sink.js';
import { InfrastructureError } from '../../../../src/core/errors/index.js';
import { addTool, DeterministicLlm, findLastIndex, reply } from './deterministic-llm.js';
import { seededRandom } from '../../../support/seeded-random.js';
import { instantClock } from './loop-harness.js';

/**
 * Crash equivalence for child sessions (docs/child-sessions.md, I3/I6): a parent whose first input
 * fans out to two children (`spawn_agent` × 2 in one reply) and whose second input waits behind it,
 * run by a tiny in-test "fleet" — claim → run → deliver with the worker's own `childrenPort` and
 * `deliverToParent` (src/worker/child-sessions.ts) — on a store that "dies" at a chosen write: a
 * random one, the write right after a spawn was recorded, a child's step mid-run, or a child's
 * delivery (after its terminal commit). A fresh worker (new leases) then repairs as the drain does
 * (`redeliverToParent` for each child) and carries on. Every repetition must end exactly like the
 * uncrashed run.
 */

/** Child tasks (DeterministicLlm: `task:<name>:<rounds of two add calls>`). */
const CHILD_TASKS = ['task:a:1', 'task:b:2'];
const FAN_OUT = `fan:${CHILD_TASKS.join(',')}`;
const SECOND_INPUT = 'task:z:1';
export const EXPECTED_PARENT_TEXT = 'combined: done:a | done:b';
/** The parent's spawn calls: ids fixed by the model (the same on a replay). */
const CALL_IDS = ['sp0', 'sp1'];

/**
 * The parent's model (a pure function of the request): a user message `fan:<t1>,<t2>` asks for one
 * `spawn_agent` call per task; once their results are in, it answers `combined: <r1> | <r2>`. Every
 * other conversation (the children's, the parent's second input) goes to {@link DeterministicLlm}.
 */
class FanOutLlm implements Llm {
  readonly provider = 'deterministic';
  readonly model = 'det-1';
  readonly #inner = new DeterministicLlm();

  async complete(request: LlmRequest, options: LlmCallOptions): Promise<LlmResponse> {
    const messages = request.messages;
    const lastUser = findLastIndex(messages, (message) => message.role === 'user');
    const text = lastUser < 0 ? '' : contentText(messages[lastUser]!.content);
    if (!text.startsWith('fan:')) return this.#inner.complete(request, options);
    const after = messages.slice(lastUser + 1);
    if (!after.some((message) => message.role === 'assistant' && (message.toolCalls?.length ?? 0) > 0)) {
      const tasks = text.slice('fan:'.length).split(',');
      return reply(
        '',
        tasks.map((task, index) => ({ id: CALL_IDS[index]!, name: SPAWN_AGENT, arguments: JSON.stringify({ agent: 'reader', task }) })),
      );
    }
    const results = after.filter((message) => message.role === 'tool').map((message) => contentText(message.content));
    return reply(`combined: ${results.join(' | ')}`, []);
  }
}

/** The dead worker's store: from the crash on, every write throws and writes nothing. */
export class WorkerKilled extends InfrastructureError {
  constructor() {
    super('worker killed (simulated)');
  }
}

/** One write the fleet makes, as the crash trigger sees it. */
export interface Write {
  method: 'commitStep' | 'parkInput' | 'spawnChild' | 'deliverChildResult';
  /** The session written: the one committing, the parent of a spawn, the child of a delivery. */
  sessionId: string;
  /** A commitStep that ends its input. */
  terminal: boolean;
}

/** Where a worker dies: at the first write for which `at` (given the writes before) says so. */
export interface CrashPlan {
  label: string;
  at: (write: Write, before: readonly Write[]) => boolean;
}

const WRITES = new Set<Write['method']>(['commitStep', 'parkInput', 'spawnChild', 'deliverChildResult']);

interface WorkerStore {
  store: SessionStore;
  writes: Write[];
  /** The write the worker died at, once it did. */
  crashedAt: () => Write | null;
}

function workerStore(inner: SessionStore, plan: CrashPlan | null, terminalCommits: Map<string, number>): WorkerStore {
  const writes: Write[] = [];
  let crashedAt: Write | null = null;
  const store = new Proxy(inner, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== 'function') return value;
      const fn = (value as (...args: unknown[]) => Promise<unknown>).bind(target);
      if (!WRITES.has(property as Write['method'])) return fn;
      const method = property as Write['method'];
      return async (...args: unknown[]) => {
        const write = describeWrite(method, args);
        if (crashedAt !== null) throw new WorkerKilled();
        if (plan !== null && plan.at(write, writes)) {
          crashedAt = write;
          throw new WorkerKilled();
        }
        const result = await fn(...args);
        writes.push(write);
        if (write.terminal) {
          const seq = (args[0] as { input: { seq: number } }).input.seq;
          const key = `${write.sessionId}#${seq}`;
          terminalCommits.set(key, (terminalCommits.get(key) ?? 0) + 1);
        }
        return result;
      };
    },
  }) as SessionStore;
  return { store, writes, crashedAt: () => crashedAt };
}

function describeWrite(method: Write['method'], args: unknown[]): Write {
  if (method === 'deliverChildResult') return { method, sessionId: args[0] as string, terminal: false };
  if (method === 'spawnChild') return { method, sessionId: (args[0] as { parentSessionId: string }).parentSessionId, terminal: false };
  const params = args[0] as { sessionId: string; input?: unknown };
  // A step's `input` transition is always terminal (TerminalInputStatus).
  return { method, sessionId: params.sessionId, terminal: method === 'commitStep' && params.input !== undefined };
}

/** A WorkerContext with only what the child-session functions use: the store, and Redis as no-ops. */
function fakeWorkerContext(store: SessionStore): WorkerContext {
  const noop = async () => '1';
  return {
    store,
    publisher: { publish: noop },
    queue: { add: async () => undefined },
    logger: { warn: () => undefined, info: () => undefined, debug: () => undefined, error: () => undefined },
  } as unknown as WorkerContext;
}

/** Everything one run of the scenario shares across its "workers". */
interface Fleet {
  store: SessionStore;
  parent: string;
  sink: CollectingSink;
  executions: Map<string, number>;
  terminalCommits: Map<string, number>;
  random: () => number;
}

function agentDeps(fleet: Fleet, store: SessionStore, agent: string, ctx: WorkerContext): LoopDeps {
  // The parent runs on the fleet's default agent (no registry needed to create it), allowed to start `reader`s.
  const lead = agent !== 'reader';
  return {
    store,
    llm: new FanOutLlm(),
    tools: ToolRegistry.from(lead ? [spawnAgentTool(['reader']), addTool(fleet.executions)] : [addTool(fleet.executions)]),
    hooks: new HookRegistry(),
    sink: fleet.sink,
    clock: instantClock,
    profile: resolveAgentProfile(lead ? { subagents: ['reader'] } : {}),
    retryPolicy: resolveRetryPolicy({ maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 2, totalTimeoutMs: null }),
    agent: { name: agent, version: '1' },
    children: childrenPort(ctx),
    random: () => 0.5,
  };
}

/**
 * One worker: repairs (each child's last ended input delivered again, as the drain's repair does),
 * then claims and runs whatever is claimable, in an order drawn from the PRNG, until nothing is or
 * it dies. Returns the write it died at, or null when the fleet went idle.
 */
async function runWorker(fleet: Fleet, plan: CrashPlan | null, name: string): Promise<{ crashedAt: Write | null; writes: number }> {
  const { store, crashedAt, writes } = workerStore(fleet.store, plan, fleet.terminalCommits);
  const ctx = fakeWorkerContext(store);
  try {
    for (const child of await store.listChildren(fleet.parent)) await redeliverToParent(ctx, child.sessionId, undefined, null);
    for (;;) {
      const sessions = [fleet.parent, ...(await store.listChildren(fleet.parent)).map((child) => child.sessionId)];
      shuffle(sessions, fleet.random);
      let ran = false;
      for (const sessionId of sessions) {
        if (await runOne(fleet, store, ctx, sessionId, name)) {
          ran = true;
          break;
        }
      }
      if (!ran) return { crashedAt: null, writes: writes.length };
    }
  } catch (error) {
    if (crashedAt() !== null) return { crashedAt: crashedAt(), writes: writes.length };
    throw error;
  }
}

/** Takes the lease, claims, runs, delivers a child's outcome as `runClaimedInput` does; false when nothing was claimable. */
async function runOne(fleet: Fleet, store: SessionStore, ctx: WorkerContext, sessionId: string, owner: string): Promise<boolean> {
  const lease = await store.acquireLease({ sessionId, owner, ttlMs: 60_000 });
  if (!lease.acquired) throw new Error(`lease of ${sessionId} busy: a dead worker's lease is released in the scenario`);
  try {
    const claimed = await store.claimNextInput({ sessionId, leaseToken: lease.token });
    if (claimed === null) return false;
    const { input, resumed, woken, session, pendingInputs, pendingSteers } = claimed;
    const outcome = await runInputOutcome(agentDeps(fleet, store, session.agent, ctx), {
      sessionId,
      leaseToken: lease.token,
      input,
      resumed,
      woken,
      session,
      pendingInputs,
      pendingSteers,
      signal: new AbortController().signal,
    });
    if (!outcome.parked) await deliverToParent(ctx, session, outcome.result, outcome.error);
    return true;
  } finally {
    // A dead worker's lease lapses; releasing it here is the same to the next holder (a new token).
    await fleet.store.releaseLease({ sessionId, token: lease.token });
  }
}

function shuffle<T>(items: T[], random: () => number): void {
  for (let i = items.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
}

/** A store and a parent session id no other run uses. */
export type ChildStoreFactory = () => Promise<{ store: SessionStore; parent: string }>;

async function startParent(store: SessionStore, parent: string): Promise<void> {
    for (const text of [FAN_OUT, SECOND_INPUT]) await store.acceptInput({ sessionId: parent, kind: 'send', mode: 'queue', payload: { input: text }, maxBytes: 1 << 20 });
}

/** What must come out the same however the run was interrupted, per session (ids relative to the parent). */
async function outcome(store: SessionStore, parent: string) {
  const sessions = [parent, ...CALL_IDS.map((id) => childSessionId(parent, id))];
  const result: Record<string, unknown> = {};
  for (const [index, sessionId] of sessions.entries()) {
    const history = (await store.loadHistory(sessionId, { includeCompacted: true })).map((row) => ({ inputSeq: row.inputSeq, kind: row.kind, state: row.state, message: row.message }));
    const inputs = (await store.listInputs(sessionId, { limit: 1000 }))
      .filter((input) => input.kind !== 'child')
      .map((input) => ({ seq: input.seq, status: input.status, result: input.result, errorCode: input.errorCode }));
    result[index === 0 ? 'parent' : `child ${CALL_IDS[index - 1]}`] = { history, inputs };
  }
  return result;
}

/** The invariants every run must end with (I3: one child per call, one delivery per result; I6: the parent input ends once). */
async function checkInvariants(fleet: Fleet, label: string, deaths: number): Promise<void> {
  const { store, parent } = fleet;
  const children = await store.listChildren(parent);
  expect(children.map((child) => [child.sessionId, child.toolCallId, child.agent, child.status]), `${label}: one child per call`).toEqual(
    CALL_IDS.map((id) => [childSessionId(parent, id), id, 'reader', 'completed']),
  );
  for (const child of children) {
    const inputs = await store.listInputs(child.sessionId, { limit: 1000 });
    expect(inputs.map((input) => [input.seq, input.status, input.result?.status]), `${label}: ${child.sessionId} ran its task once`).toEqual([[1, 'done', 'completed']]);
    expect(protocolViolations((await store.loadHistory(child.sessionId)).map((row) => row.message)), `${label}: ${child.sessionId} history`).toEqual([]);
  }
  const inbox = await store.listInputs(parent, { limit: 1000 });
  const deliveries = inbox.filter((input) => input.kind === 'child');
  expect(deliveries.map((input) => input.inputId).sort(), `${label}: one delivery per call`).toEqual(CALL_IDS.map((id) => `child:${id}`));
  for (const delivery of deliveries) expect([delivery.status, delivery.steeredInto], `${label}: ${delivery.inputId} steered into input 1`).toEqual(['done', 1]);
  const own = inbox.filter((input) => input.kind !== 'child');
  expect(own.map((input) => [input.seq, input.status, input.result?.status, input.result?.finalText]), `${label}: parent inputs`).toEqual([
    [1, 'done', 'completed', EXPECTED_PARENT_TEXT],
    [2, 'done', 'completed', 'done:z'],
  ]);
  expect(protocolViolations((await store.loadHistory(parent)).map((row) => row.message)), `${label}: parent history`).toEqual([]);
  // The parent's tool results, in call order, each once.
  const results = (await store.loadHistory(parent)).map((row) => row.message).flatMap((message) => (message.role === 'tool' && message.name === SPAWN_AGENT ? [[message.toolCallId, contentText(message.content)]] : []));
  expect(results, `${label}: parent tool results`).toEqual([
    ['sp0', 'done:a'],
    ['sp1', 'done:b'],
  ]);
  // Every input ended in exactly one terminal commit (I6 at the store: a second would have been a second finish).
  const ends = [`${parent}#1`, `${parent}#2`, ...CALL_IDS.map((id) => `${childSessionId(parent, id)}#1`)];
  expect(ends.map((key) => [key, fleet.terminalCommits.get(key) ?? 0]), `${label}: terminal commits`).toEqual(ends.map((key) => [key, 1]));
  expect([...fleet.terminalCommits.keys()].sort(), `${label}: nothing else ended`).toEqual([...ends].sort());
  // `subagent_started` once per child, whatever was run again.
  expect(fleet.sink.ofType('subagent_started').map((event) => event.childSessionId).sort(), `${label}: subagent_started`).toEqual(CALL_IDS.map((id) => childSessionId(parent, id)));
  // A tool runs again only when its start was recorded and its end was not (I5): at most once more per death.
  for (const [key, count] of fleet.executions) expect(count, `${label}: ${key} executions`).toBeLessThanOrEqual(1 + deaths);
}

export interface CrashReport {
  reps: number;
  crashes: number;
  /** How many crashes hit each kind of point (`parent commitStep`, `child deliverChildResult` …). */
  byPoint: Record<string, number>;
  byPlan: Record<string, number>;
  writesUncrashed: number;
}

/**
 * The reference run (no crash), then `reps` runs with 1–3 worker deaths each: the first at a point of
 * the kind the repetition targets (rep % 4: random write, right after a spawn was recorded, a child
 * mid-run, a child's delivery), the others at random writes.
 */
export async function checkChildCrashes(makeStore: ChildStoreFactory, reps: number, seed: number): Promise<CrashReport> {
  const random = seededRandom(seed);
  const reference = await makeStore();
  await startParent(reference.store, reference.parent);
  const refFleet: Fleet = { store: reference.store, parent: reference.parent, sink: new CollectingSink(), executions: new Map(), terminalCommits: new Map(), random };
  const clean = await runWorker(refFleet, null, 'reference');
  expect(clean.crashedAt).toBeNull();
  await checkInvariants(refFleet, 'reference', 0);
  const expected = relative(await outcome(reference.store, reference.parent), reference.parent);
  const total = clean.writes;

  const report: CrashReport = { reps, crashes: 0, byPoint: {}, byPlan: {}, writesUncrashed: total };
  for (let rep = 0; rep < reps; rep += 1) {
    const { store, parent } = await makeStore();
    await startParent(store, parent);
    const fleet: Fleet = { store, parent, sink: new CollectingSink(), executions: new Map(), terminalCommits: new Map(), random };
    const deaths = 1 + Math.floor(random() * 3);
    const plans: string[] = [];
    for (let death = 0; death < deaths; death += 1) {
      const plan = death === 0 ? targetedPlan(rep % 4, parent, random, total) : randomPlan(random, total);
      const ran = await runWorker(fleet, plan, `worker-${rep}-${death}`);
      if (ran.crashedAt === null) break;
      plans.push(`${plan.label} → died at ${ran.crashedAt.method} of ${ran.crashedAt.sessionId === parent ? 'parent' : 'child'}`);
      report.crashes += 1;
      const kind = plan.label.replace(/ \d+$/, "");
      report.byPlan[kind] = (report.byPlan[kind] ?? 0) + 1;
      const point = `${ran.crashedAt.sessionId === parent ? 'parent' : 'child'} ${ran.crashedAt.method}${ran.crashedAt.terminal ? ' (terminal)' : ''}`;
      report.byPoint[point] = (report.byPoint[point] ?? 0) + 1;
    }
    const last = await runWorker(fleet, null, `worker-${rep}-final`);
    expect(last.crashedAt).toBeNull();
    const label = `seed ${seed} rep ${rep} [${plans.join('; ') || 'no crash'}]`;
    await checkInvariants(fleet, label, plans.length);
    expect(relative(await outcome(store, parent), parent), `${label}: same histories and results as the uncrashed run`).toEqual(expected);
  }
  return report;
}

/** The first death of a repetition, by kind. */
function targetedPlan(kind: number, parent: string, random: () => number, total: number): CrashPlan {
  const count = (before: readonly Write[], match: (write: Write) => boolean) => before.filter(match).length;
  switch (kind) {
    case 1: {
      // Right after the k-th spawn was recorded: the parent's next write (the second spawn, or the park).
      const k = 1 + Math.floor(random() * CALL_IDS.length);
      return { label: `after spawn ${k}`, at: (write, before) => write.sessionId === parent && count(before, (w) => w.method === 'spawnChild') === k && before.at(-1)?.method === 'spawnChild' };
    }
    case 2: {
      // A child mid-run: one of its step commits (not the delivery), the n-th of any child.
      const n = Math.floor(random() * 6);
      return { label: `child step ${n}`, at: (write, before) => write.method === 'commitStep' && write.sessionId !== parent && count(before, (w) => w.method === 'commitStep' && w.sessionId !== parent) === n };
    }
    case 3: {
      // After a child's terminal commit, before its result reached the parent's inbox.
      const k = Math.floor(random() * CALL_IDS.length);
      return { label: `delivery ${k + 1}`, at: (write, before) => write.method === 'deliverChildResult' && count(before, (w) => w.method === 'deliverChildResult') === k };
    }
    default:
      return randomPlan(random, total);
  }
}

function randomPlan(random: () => number, total: number): CrashPlan {
  const n = Math.floor(random() * total);
  return { label: `random write ${n}`, at: (_write, before) => before.length === n };
}

/** The outcome with the parent's id replaced, so runs under different ids compare. */
function relative(value: unknown, parent: string): unknown {
  return JSON.parse(JSON.stringify(value).split(parent).join('<parent>'));
}
