import { describe, expect, it } from 'vitest';
import { InMemorySessionStore } from '../../../support/fakes/in-memory-session-store.js';
import { checkEveryCrashPoint } from './crash-scenario.js';

const inMemory = async () => ({ store: new InMemorySessionStore(), sessionId: 's1' });

describe('crash at every persisted step (in-memory store)', { timeout: 120_000 }, () => {
  it('replays to the same history and results', async () => {
    const { commits, folded } = await checkEveryCrashPoint(inMemory, {});
    expect(commits).toBeGreaterThan(20);
    expect(folded).toBe(0);
  });

  it('replays to the same history with compaction folding old inputs', async () => {
    const { commits, folded } = await checkEveryCrashPoint(inMemory, { contextBudgetTokens: 120, compactKeepLastInputs: 1 });
    expect(commits).toBeGreaterThan(20);
    expect(folded).toBeGreaterThan(0);
  });
});
