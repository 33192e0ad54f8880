import { expect } from 'vitest';
import type { AgentProfile } from '../../../../src/core/agent-profile.js';
import { protocolViolations } from '../../../../src/core/history/index.js';
import type { SessionStore } from '../../../../src/core/ports/session-store.js';
import { crashAfterCommits, SimulatedCrash } from '../../../support/fakes/crashing-store.js';
import { addTool, DeterministicLlm } from './deterministic-llm.js';
import { LoopHarness } from './loop-harness.js';

const TASKS = ['task:a:2', 'task:b:0', 'task:c:3', 'task:d:1'];

/** A store and a session id no other scenario uses. */
export type StoreFactory = () => Promise<{ store: SessionStore; sessionId: string }>;

/** Runs every pending input; with a crashing store, returns when the "process" dies. */
async function drain(harness: LoopHarness): Promise<'idle' | 'crashed'> {
  for (;;) {
    try {
      if ((await harness.runNext()) === null) return 'idle';
    } catch (error) {
      if (error instanceof SimulatedCrash) return 'crashed';
      throw error;
    }
  }
}

async function outcome(store: SessionStore, sessionId: string) {
  const rows = await store.loadHistory(sessionId, { includeCompacted: true });
  const inputs = await store.listInputs(sessionId);
  return {
    history: rows.map((row) => ({ seq: row.seq, inputSeq: row.inputSeq, kind: row.kind, state: row.state, message: row.message })),
    results: inputs.map((input) => ({ seq: input.seq, status: input.status, result: input.result })),
  };
}

async function commitsOf(store: SessionStore, run: (store: SessionStore) => Promise<void>): Promise<number> {
  let commits = 0;
  const counting = new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'commitStep') return (step: Parameters<SessionStore['commitStep']>[0]) => ((commits += 1), target.commitStep(step));
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  await run(counting);
  return commits;
}

/**
 * For a scripted conversation, stopping the worker after every single persisted step and restarting
 * from the store yields the same final history and results as an uninterrupted run: no duplicate, no
 * missing tool result (issue 3, "Done when"; I3–I6). Returns the number of steps and the
 * number of messages compaction folded in the reference run.
 */
export async function checkEveryCrashPoint(makeStore: StoreFactory, profile: Partial<AgentProfile>): Promise<{ commits: number; folded: number }> {
  const reference = await makeStore();
  const totalCommits = await commitsOf(reference.store, async (store) => {
    const harness = new LoopHarness({ llm: new DeterministicLlm(), tools: [addTool(new Map())], store, sessionId: reference.sessionId, profile });
    for (const task of TASKS) await harness.send(task);
    expect(await drain(harness)).toBe('idle');
  });
  const expected = await outcome(reference.store, reference.sessionId);
  expect(protocolViolations((await reference.store.loadHistory(reference.sessionId)).map((row) => row.message))).toEqual([]);

  for (let crashAt = 0; crashAt < totalCommits; crashAt += 1) {
    const { store, sessionId } = await makeStore();
    const executions = new Map<string, number>();
    const options = { llm: new DeterministicLlm(), tools: [addTool(executions)], sessionId, profile };
    const crashing = new LoopHarness({ ...options, store: crashAfterCommits(store, crashAt) });
    for (const task of TASKS) await crashing.send(task);
    expect(await drain(crashing), `crash point ${crashAt}`).toBe('crashed');
    const restarted = new LoopHarness({ ...options, llm: new DeterministicLlm(), store });
    expect(await drain(restarted), `restart after crash point ${crashAt}`).toBe('idle');
    expect(await outcome(store, sessionId), `crash point ${crashAt}`).toEqual(expected);
    // A tool runs again only when its start was recorded and its end was not (I5, policy retry).
    for (const [key, count] of executions) expect(count, `${key} at crash point ${crashAt}`).toBeLessThanOrEqual(2);
  }
  return { commits: totalCommits, folded: expected.history.filter((row) => row.state === 'compacted').length };
}
