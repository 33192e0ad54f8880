import { describe, expect, it } from 'vitest';
import { InMemorySessionStore } from '../../../support/fakes/in-memory-session-store.js';
import { checkChildCrashes } from './child-crash-scenario.js';

/**
 * kill -9 of the worker running a parent right after the spawn was recorded, of one running a child
 * mid-run, and between a child's terminal commit and its delivery (docs/child-sessions.md, "Crashes";
 * I3, I6): 50 repetitions with random kill points, seeded (CHILD_CRASH_SEED reproduces a run).
 */
describe('child sessions: worker deaths at random points (in-memory store)', { timeout: 120_000 }, () => {
  it('50 repetitions: one child per call, one delivery per result, the parent finishes once, same histories', async () => {
    const seed = Number(process.env.CHILD_CRASH_SEED ?? Date.now() % 1_000_000);
    console.info(`children crash equivalence (in-memory): seed ${seed} (CHILD_CRASH_SEED=${seed} reproduces it)`);
    let counter = 0;
    const report = await checkChildCrashes(async () => ({ store: new InMemorySessionStore(), parent: `fanout-${++counter}` }), 50, seed);
    console.info(`children crash equivalence (in-memory, seed ${seed}): ${JSON.stringify(report)}`);
    expect(report.crashes).toBeGreaterThanOrEqual(50);
    // Every targeted kind of point was hit: right after a spawn, a child mid-run, a child's delivery.
    expect(Object.keys(report.byPoint)).toEqual(expect.arrayContaining(['parent spawnChild', 'parent parkInput', 'child commitStep', 'child deliverChildResult']));
  });
});
