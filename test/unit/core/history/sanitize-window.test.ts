import { describe, expect, it, vi } from 'vitest';

// The real sanitizer, watched: a call with the whole view is the full path, a shorter one the suffix.
vi.mock('../../../../src/core/history/sanitize-history.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../../src/core/history/sanitize-history.js')>();
  return { ...actual, sanitizeHistory: vi.fn(actual.sanitizeHistory) };
});

import { arrangeWindow } from '../../../../src/core/compaction/index.js';
import { sanitizeHistory, type SanitizeResult } from '../../../../src/core/history/index.js';
import type { Message, StoredMessage } from '../../../../src/core/messages.js';
import { arrangedWindowMessages, findDigest, sanitizeWindow, windowCallIds, windowHasFold } from '../../../../src/core/window/index.js';
import { assistant, result, system, user } from './builders.js';
import { Rand, SessionSim, stored } from './window-simulator.js';

const sanitizeSpy = vi.mocked(sanitizeHistory);

/** The model's view, computed over the whole window with no digest involved. */
function fullView(window: readonly StoredMessage[]): Message[] {
  return arrangeWindow(window).map((row) => row.message);
}

/** `sanitizeWindow(window)`, whether it sanitized the whole view (the full path), and the longest input it sanitized. */
function sanitizeWatched(window: readonly StoredMessage[]): { result: SanitizeResult; full: boolean; longest: number } {
  const viewLength = fullView(window).length;
  sanitizeSpy.mockClear();
  const result = sanitizeWindow(window);
  const lengths = sanitizeSpy.mock.calls.map(([messages]) => messages.length);
  return { result, full: lengths.includes(viewLength) && viewLength > 0, longest: Math.max(0, ...lengths) };
}

function expectSameView(window: readonly StoredMessage[]): void {
  const expected = fullView(window);
  const actual = arrangedWindowMessages(window);
  expect(actual).toHaveLength(expected.length);
  expect(sameObjects(actual, expected)).toBe(true);
}

function sameObjects(actual: readonly Message[], expected: readonly Message[]): boolean {
  return actual.every((message, index) => message === expected[index]);
}

function expectSameSanitized(window: readonly StoredMessage[]): boolean {
  const expected = sanitizeHistory(fullView(window));
  const { result, full } = sanitizeWatched(window);
  expect(result).toEqual(expected);
  if (expected.repairs.length === 0) expect(sameObjects(result.messages, expected.messages)).toBe(true);
  return full;
}

function expectSameCallIds(window: readonly StoredMessage[], rand: Rand): void {
  const all = new Set(window.flatMap(({ message }) => (message.role === 'assistant' ? (message.toolCalls ?? []).map((call) => call.id) : [])));
  const ids = windowCallIds(window);
  const probes = [...all].filter(() => rand.chance(0.2)).concat(['', 'call_1', `call_${rand.int(2000)}`, 'never_used']);
  for (const id of probes) expect(ids.has(id), id).toBe(all.has(id));
  expect(windowHasFold(window)).toBe(window.some((row) => row.kind === 'compact_note'));
}

/** A window grown the way the loop grows it: per round a question, a call, its result, a reply and a thank-you. */
function healthyRound(sim: { window: StoredMessage[] }, seq: { next: number }, round: number): void {
  const id = `call_${round}`;
  const messages: Message[] = [user(`question ${round}`), assistant(id), result(id), assistant(), user('thanks')];
  for (const message of messages) sim.window.push(stored(seq.next++, message, 'message', round));
}

describe('sanitizeWindow and the window view', () => {
  it('equal the whole-window computations after every change of a random window (seeded)', () => {
    let fast = 0;
    let full = 0;
    for (let trial = 0; trial < 48; trial += 1) {
      const rand = new Rand(1000 + trial);
      const damage = [0, 0, 0.02, 0.1, 0.3][trial % 5]!;
      let sims = [new SessionSim(rand, damage)];
      for (let step = 0; step < 250; step += 1) {
        if (rand.chance(0.01) && sims.length === 1) sims = [sims[0]!, sims[0]!.fork()];
        if (rand.chance(0.01) && sims.length === 2) sims = [sims[rand.int(2)]!];
        const sim = rand.pick(sims);
        const change = sim.step();
        const window = sim.window;
        // Not every change is followed by a request (several steps commit between two rounds).
        if (rand.chance(0.3)) continue;
        if (rand.chance(0.5)) expectSameView(window);
        try {
          if (expectSameSanitized(window)) full += 1;
          else fast += 1;
          expectSameCallIds(window, rand);
          expectSameView(window);
        } catch (error) {
          throw new Error(`trial ${trial} step ${step} after "${change}": ${(error as Error).message}`);
        }
      }
    }
    // Both paths were exercised, the suffix one most.
    expect(fast).toBeGreaterThan(full);
    expect(full).toBeGreaterThan(50);
    // 48 seeded trials of 250 steps: about 2 s alone, over 5 s on two busy cores beside other files.
  }, 30_000);

  it('sanitizes only the rows appended since the last round of a healthy growing window', () => {
    const sim = { window: [stored(1, system(), 'message', null)] };
    const seq = { next: 2 };
    for (let round = 1; round <= 400; round += 1) healthyRound(sim, seq, round);
    expect(sanitizeWatched(sim.window).full).toBe(true);
    for (let round = 401; round <= 600; round += 1) {
      healthyRound(sim, seq, round);
      const { result, full, longest } = sanitizeWatched(sim.window);
      expect(full).toBe(false);
      expect(longest).toBeLessThanOrEqual(6);
      expect(result.repairs).toEqual([]);
      expect(result.messages).toHaveLength(sim.window.length);
    }
    expect(findDigest(sim.window)?.sanitized).toBe(true);
  });

  it('picks up where the last run left off when the next run gets the same rows, or fresh copies of the newer ones', () => {
    const sim = { window: [] as StoredMessage[] };
    const seq = { next: 1 };
    for (let round = 1; round <= 200; round += 1) healthyRound(sim, seq, round);
    sanitizeWatched(sim.window);
    // Run 1: the store's cache hands back the same rows; the run appends 30 rounds in memory.
    sim.window = sim.window.slice();
    const loaded = sim.window.length;
    for (let round = 201; round <= 230; round += 1) {
      healthyRound(sim, seq, round);
      expect(sanitizeWatched(sim.window).full).toBe(false);
    }
    // Run 2: the rows run 1 appended are read again (new objects), the older ones come from the cache.
    sim.window = sim.window.map((row, index) => (index < loaded ? row : structuredClone(row)));
    healthyRound(sim, seq, 231);
    expect(sanitizeWatched(sim.window)).toMatchObject({ full: false });
    expect(sanitizeWatched(sim.window).result).toEqual(sanitizeHistory(fullView(sim.window)));
  });

  it('goes back to the full sanitizer once after a fold, then to the suffix', () => {
    const sim = { window: [] as StoredMessage[] };
    const seq = { next: 1 };
    for (let round = 1; round <= 100; round += 1) healthyRound(sim, seq, round);
    sanitizeWatched(sim.window);
    const kept = sim.window.filter((row) => row.inputSeq !== null && row.inputSeq > 50);
    sim.window = [...kept, stored(seq.next++, user('<compact_note>\nsummary\n</compact_note>'), 'compact_note', 101)];
    expect(sanitizeWatched(sim.window).full).toBe(true);
    expectSameView(sim.window);
    for (let round = 101; round <= 110; round += 1) {
      healthyRound(sim, seq, round);
      expect(sanitizeWatched(sim.window).full).toBe(false);
      expectSameView(sim.window);
      expect(sanitizeWindow(sim.window)).toEqual(sanitizeHistory(fullView(sim.window)));
    }
  });

  it('falls back to the full sanitizer when a new call reuses an id of the prefix', () => {
    const sim = { window: [] as StoredMessage[] };
    const seq = { next: 1 };
    for (let round = 1; round <= 20; round += 1) healthyRound(sim, seq, round);
    sanitizeWindow(sim.window);
    for (const message of [user(), assistant('call_3'), result('call_3')]) sim.window.push(stored(seq.next++, message, 'message', 21));
    const { result: sanitized, full } = sanitizeWatched(sim.window);
    expect(full).toBe(true);
    expect(sanitized.repairs.map((repair) => repair.kind)).toEqual(['call_id_renamed']);
    expect(sanitized).toEqual(sanitizeHistory(fullView(sim.window)));
  });

  it('puts a note whose prefix holds no turn after the system messages appended later', () => {
    const rows = [stored(1, system()), stored(2, user('<compact_note>\nall of it\n</compact_note>'), 'compact_note')];
    sanitizeWindow(rows);
    expect(findDigest(rows)?.length).toBe(2);
    rows.push(stored(3, system('later')), stored(4, user()));
    expectSameView(rows);
    expect(sanitizeWindow(rows)).toEqual(sanitizeHistory(fullView(rows)));
  });

  it('finds an id of an older prefix even when the lineage saw it again later', () => {
    const loaded = [stored(1, user()), stored(2, assistant('x')), stored(3, result('x')), stored(4, user())];
    sanitizeWindow(loaded);
    // A run appends a call that repeats `x` (a rename), and the next run reads those rows again.
    const run = [...loaded, stored(5, assistant('x')), stored(6, result('x')), stored(7, user())];
    expect(sanitizeWindow(run).repairs.map((repair) => repair.kind)).toEqual(['call_id_renamed']);
    const next = [...loaded, ...run.slice(4).map((row) => structuredClone(row))];
    expect(sanitizeWindow(next)).toEqual(sanitizeHistory(fullView(next)));
    expect(windowCallIds(next).has('x')).toBe(true);
  });

  it('gives a window out of seq order the whole-window results', () => {
    const rows = [stored(1, user('a')), stored(2, assistant('x')), stored(3, result('x')), stored(9, user('b'))];
    sanitizeWindow(rows);
    rows.push(stored(5, assistant('y')));
    expectSameView(rows);
    expect(sanitizeWindow(rows)).toEqual(sanitizeHistory(fullView(rows)));
  });
});
