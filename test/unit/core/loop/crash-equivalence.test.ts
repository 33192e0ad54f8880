import { describe, expect, it } from 'vitest';
import type { AgentProfile } from '../../../../src/core/agent-profile.js';
import { protocolViolations } from '../../../../src/core/history/index.js';
import { crashAfterCommits, SimulatedCrash } from '../../../support/fakes/crashing-store.js';
import { InMemorySessionStore } from '../../../support/fakes/in-memory-session-store.js';
import { addTool, DeterministicLlm } from './deterministic-llm.js';
import { LoopHarness } from './loop-harness.js';

const TASKS = ['task:a:2', 'task:b:0', 'task:c:3'];

interface Outcome {
  history: unknown[];
  results: unknown[];
}

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

async function outcome(store: InMemorySessionStore): Promise<Outcome> {
  const rows = await store.loadHistory('s1', { includeCompacted: true });
  const inputs = await store.listInputs('s1');
  return {
    history: rows.map((row) => ({ seq: row.seq, inputSeq: row.inputSeq, kind: row.kind, state: row.state, message: row.message })),
    results: inputs.map((input) => ({ seq: input.seq, status: input.status, result: input.result })),
  };
}

/**
 * For a scripted conversation, stopping the worker after every single persisted step and restarting
 * from the store yields the same final history and results as an uninterrupted run: no duplicate, no
 * missing tool result (issue 3, "Done when"; DESIGN.md I3–I6).
 */
async function checkEveryCrashPoint(profile: Partial<AgentProfile>): Promise<{ commits: number; folded: number }> {
  const reference = new InMemorySessionStore();
  const referenceHarness = new LoopHarness({ llm: new DeterministicLlm(), tools: [addTool(new Map())], store: reference, profile });
  for (const task of TASKS) await referenceHarness.send(task);
  expect(await drain(referenceHarness)).toBe('idle');
  const expected = await outcome(reference);
  expect(protocolViolations((await reference.loadHistory('s1')).map((row) => row.message))).toEqual([]);
  const totalCommits = reference.commits;

  for (let crashAt = 0; crashAt < totalCommits; crashAt += 1) {
    const store = new InMemorySessionStore();
    const executions = new Map<string, number>();
    const crashing = new LoopHarness({ llm: new DeterministicLlm(), tools: [addTool(executions)], store: crashAfterCommits(store, crashAt), profile });
    for (const task of TASKS) await crashing.send(task);
    expect(await drain(crashing), `crash point ${crashAt}`).toBe('crashed');
    const restarted = new LoopHarness({ llm: new DeterministicLlm(), tools: [addTool(executions)], store, profile });
    expect(await drain(restarted), `restart after crash point ${crashAt}`).toBe('idle');
    expect(await outcome(store), `crash point ${crashAt}`).toEqual(expected);
    // A tool runs again only when its start was recorded and its end was not (I5, policy retry).
    for (const [key, count] of executions) expect(count, `${key} at crash point ${crashAt}`).toBeLessThanOrEqual(2);
  }
  return { commits: totalCommits, folded: expected.history.filter((row) => (row as { state: string }).state === 'compacted').length };
}

describe('crash at every persisted step', { timeout: 120_000 }, () => {
  it('replays to the same history and results', async () => {
    const { commits, folded } = await checkEveryCrashPoint({});
    expect(commits).toBeGreaterThan(20);
    expect(folded).toBe(0);
  });

  it('replays to the same history with compaction folding old inputs', async () => {
    const { commits, folded } = await checkEveryCrashPoint({ contextBudgetTokens: 120, compactKeepLastInputs: 1 });
    expect(commits).toBeGreaterThan(20);
    expect(folded).toBeGreaterThan(0);
  });
});
