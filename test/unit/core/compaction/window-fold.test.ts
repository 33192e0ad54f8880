import { describe, expect, it, vi } from 'vitest';

// The real functions, watched: how many messages are estimated, and whether the full plan ran.
vi.mock('../../../../src/core/budget/estimate-tokens.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../../src/core/budget/estimate-tokens.js')>();
  return { ...actual, estimateMessageTokens: vi.fn(actual.estimateMessageTokens) };
});
vi.mock('../../../../src/core/compaction/plan-fold.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../../src/core/compaction/plan-fold.js')>();
  return { ...actual, planFold: vi.fn(actual.planFold) };
});

import { estimateMessageTokens, estimateMessagesTokens } from '../../../../src/core/budget/index.js';
import { arrangeWindow, planFold, type FoldOptions } from '../../../../src/core/compaction/index.js';
import type { StoredMessage } from '../../../../src/core/messages.js';
import { arrangedWindowMessages, planWindowFold, sanitizeWindow, windowTokens } from '../../../../src/core/window/index.js';
import { Rand, SessionSim } from '../history/window-simulator.js';
import { WindowBuilder } from './window-builder.js';

const estimateSpy = vi.mocked(estimateMessageTokens);
const planSpy = vi.mocked(planFold);

function activeTokens(window: readonly StoredMessage[]): number {
  return estimateMessagesTokens(window.filter((row) => row.state === 'active').map((row) => row.message));
}

/** Options that fold this window or not, about half the time each. */
function randomOptions(window: readonly StoredMessage[], rand: Rand): FoldOptions {
  const tokens = activeTokens(window);
  const triggerRatio = rand.chance(0.5) ? undefined : 0.5 + rand.next() / 2;
  const contextBudgetTokens = Math.max(1, Math.round((tokens / (triggerRatio ?? 0.75)) * (0.8 + rand.next() * 0.4)));
  return { contextBudgetTokens, triggerRatio, keepLastInputs: rand.chance(0.5) ? undefined : 1 + rand.int(4) };
}

describe('planWindowFold and windowTokens', () => {
  it('equal planFold and the whole-window estimate after every change of a random window (seeded)', () => {
    let folds = 0;
    let skipped = 0;
    for (let trial = 0; trial < 40; trial += 1) {
      const rand = new Rand(7000 + trial);
      const sim = new SessionSim(rand, [0, 0, 0.05, 0.2][trial % 4]!);
      for (let step = 0; step < 200; step += 1) {
        const change = sim.step();
        const window = sim.window;
        if (rand.chance(0.3)) continue;
        try {
          expect(windowTokens(window)).toBe(activeTokens(window));
          const options = randomOptions(window, rand);
          const plan = planWindowFold(window, options);
          expect(plan).toEqual(planFold(window, options));
          if (plan === null) skipped += 1;
          else folds += 1;
          // The round's request, which records the digest the next round starts from.
          if (rand.chance(0.8)) sanitizeWindow(window);
          const expected = arrangeWindow(window).map((row) => row.message);
          const view = arrangedWindowMessages(window);
          expect(view.length === expected.length && view.every((message, index) => message === expected[index])).toBe(true);
        } catch (error) {
          throw new Error(`trial ${trial} step ${step} after "${change}": ${(error as Error).message}`);
        }
      }
    }
    expect(folds).toBeGreaterThan(500);
    expect(skipped).toBeGreaterThan(500);
  });

  it('estimates only the rows appended since the last round, and skips planFold under the trigger', () => {
    const builder = new WindowBuilder().system('policy');
    for (let input = 1; input <= 400; input += 1) builder.input(input, { rounds: 1 });
    const window = builder.rows;
    const options = { contextBudgetTokens: 10_000_000 };
    expect(planWindowFold(window, options)).toBeNull();
    sanitizeWindow(window);
    for (let input = 401; input <= 500; input += 1) {
      const before = window.length;
      builder.input(input, { rounds: 1 });
      estimateSpy.mockClear();
      planSpy.mockClear();
      expect(planWindowFold(window, options)).toBeNull();
      expect(estimateSpy.mock.calls.length).toBeLessThanOrEqual(window.length - before + 1);
      expect(planSpy).not.toHaveBeenCalled();
      sanitizeWindow(window);
    }
    expect(windowTokens(window)).toBe(activeTokens(window));
  });

  it('plans like planFold over the trigger, and rejects the options planFold rejects', () => {
    const builder = new WindowBuilder();
    for (let input = 1; input <= 8; input += 1) builder.input(input, { rounds: 2 });
    sanitizeWindow(builder.rows);
    builder.input(9);
    expect(planWindowFold(builder.rows, { contextBudgetTokens: 1 })).toEqual(planFold(builder.rows, { contextBudgetTokens: 1 }));
    expect(planWindowFold(builder.rows, { contextBudgetTokens: 1 })).not.toBeNull();
    const invalid = [{ contextBudgetTokens: 0 }, { contextBudgetTokens: 10, triggerRatio: 2 }, { contextBudgetTokens: 10, keepLastInputs: 0 }];
    for (const options of invalid) {
      expect(() => planWindowFold(builder.rows, options)).toThrow(expect.objectContaining({ code: 'config.invalid' }));
    }
  });
});
