import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeltaCoalescer, type ReleasedEvent } from '../../../src/events/delta-coalescer.js';
import type { FleetEvent } from '../../../src/fleet/fleet-events.js';

const delta = (text: string, streamId = 's1'): FleetEvent => ({ type: 'stream_delta', streamId, text });
const think = (text: string, streamId = 's1'): FleetEvent => ({ type: 'stream_think_delta', streamId, text });
const toolStarted: FleetEvent = { type: 'tool_call_started', name: 'search', toolCallId: 't1', toolInput: {}, attempt: 1 };

/** Feeds events at the given times and collects everything released, then flushes. */
function run(coalescer: DeltaCoalescer, steps: [number, FleetEvent][], inputSeq: number | null = 1): ReleasedEvent[] {
  const out: ReleasedEvent[] = [];
  for (const [at, event] of steps) out.push(...coalescer.offer({ inputSeq, event }, at));
  out.push(...coalescer.release());
  return out;
}

const texts = (released: ReleasedEvent[]) => released.map((r) => ('text' in r.event ? r.event.text : r.event.type));

describe('DeltaCoalescer', () => {
  it('merges consecutive deltas of one stream within the window into one event', () => {
    const c = new DeltaCoalescer(25, 2048);
    const out = run(c, [[0, delta('Hel')], [5, delta('lo, ')], [24, delta('world')]]);
    expect(out).toEqual([{ inputSeq: 1, event: { type: 'stream_delta', streamId: 's1', text: 'Hello, world' }, parts: 3 }]);
  });

  it('holds the first delta and reports its deadline; releasing returns the original object', () => {
    const c = new DeltaCoalescer(25, 2048);
    const first = delta('a');
    expect(c.offer({ inputSeq: 1, event: first }, 100)).toEqual([]);
    expect(c.deadline).toBe(125);
    const [released] = c.release();
    expect(released?.event).toBe(first);
    expect(c.deadline).toBeNull();
  });

  it('starts a new group once the window of the first delta has passed', () => {
    const c = new DeltaCoalescer(25, 2048);
    expect(texts(run(c, [[0, delta('a')], [10, delta('b')], [25, delta('c')], [30, delta('d')]]))).toEqual(['ab', 'cd']);
  });

  it('releases the pending delta before any other event, preserving order', () => {
    const c = new DeltaCoalescer(25, 2048);
    const out = run(c, [[0, delta('a')], [1, delta('b')], [2, toolStarted], [3, delta('c')]]);
    expect(texts(out)).toEqual(['ab', 'tool_call_started', 'c']);
  });

  it('keeps text and thinking deltas apart, and different streams apart', () => {
    const c = new DeltaCoalescer(25, 2048);
    const out = run(c, [[0, think('t1')], [1, think('t2')], [2, delta('x')], [3, delta('y', 's2')], [4, delta('z', 's2')]]);
    expect(out.map((r) => [r.event.type, 'text' in r.event ? r.event.text : null])).toEqual([
      ['stream_think_delta', 't1t2'],
      ['stream_delta', 'x'],
      ['stream_delta', 'yz'],
    ]);
  });

  it('never merges deltas of different inputs', () => {
    const c = new DeltaCoalescer(25, 2048);
    const out = [...c.offer({ inputSeq: 1, event: delta('a') }, 0), ...c.offer({ inputSeq: 2, event: delta('b') }, 1), ...c.release()];
    expect(out.map((r) => r.inputSeq)).toEqual([1, 2]);
  });

  it('caps merged text at maxChars and releases as soon as the cap is reached', () => {
    const c = new DeltaCoalescer(1000, 10);
    const steps: [number, FleetEvent][] = Array.from({ length: 25 }, (_, i) => [i, delta('abcd')]);
    const out = run(c, steps);
    expect(out.every((r) => 'text' in r.event && r.event.text.length <= 10)).toBe(true);
    expect(texts(out).join('')).toBe('abcd'.repeat(25));
    expect(out.reduce((sum, r) => sum + r.parts, 0)).toBe(25);
  });

  it('releases a group exactly at the cap without waiting for the window', () => {
    const c = new DeltaCoalescer(1000, 4);
    expect(c.offer({ inputSeq: 1, event: delta('ab') }, 0)).toEqual([]);
    expect(texts(c.offer({ inputSeq: 1, event: delta('cd') }, 1))).toEqual(['abcd']);
    expect(c.deadline).toBeNull();
  });

  it('passes a single delta longer than the cap through unchanged', () => {
    const c = new DeltaCoalescer(25, 4);
    expect(texts(run(c, [[0, delta('ab')], [1, delta('0123456789')], [2, delta('c')]]))).toEqual(['ab', '0123456789', 'c']);
  });

  it('does not merge at all with a window of 0', () => {
    const c = new DeltaCoalescer(0, 2048);
    const out = run(c, [[0, delta('a')], [0, delta('b')]]);
    expect(texts(out)).toEqual(['a', 'b']);
    expect(out.map((r) => r.parts)).toEqual([1, 1]);
  });

  it('preserves order and text, and respects the cap, for any sequence (property)', () => {
    const step = fc.record({
      gap: fc.integer({ min: 0, max: 40 }),
      kind: fc.constantFrom('delta', 'think', 'other'),
      streamId: fc.constantFrom('s1', 's2'),
      text: fc.string({ maxLength: 30 }),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 200 }), fc.integer({ min: 0, max: 30 }), fc.integer({ min: 1, max: 64 }), (steps, windowMs, maxChars) => {
        const c = new DeltaCoalescer(windowMs, maxChars);
        let now = 0;
        const input: FleetEvent[] = steps.map((s) =>
          s.kind === 'other' ? toolStarted : s.kind === 'think' ? think(s.text, s.streamId) : delta(s.text, s.streamId),
        );
        const timed: [number, FleetEvent][] = input.map((event, i) => [(now += steps[i]!.gap), event]);
        const out = run(c, timed);
        expect(out.reduce((sum, r) => sum + r.parts, 0)).toBe(input.length);
        expect(flatten(out.map((r) => r.event))).toEqual(flatten(input));
        for (const r of out) {
          if (r.parts > 1 && 'text' in r.event) expect(r.event.text.length).toBeLessThanOrEqual(maxChars);
        }
      }),
    );
  });
});

/** Text of consecutive same-stream deltas joined into runs, other events as their type: merging must not change it. */
function flatten(events: FleetEvent[]): string[] {
  const out: string[] = [];
  let key: string | null = null;
  for (const event of events) {
    if (event.type === 'stream_delta' || event.type === 'stream_think_delta') {
      const k = `${event.type}/${event.streamId}`;
      if (k === key) out[out.length - 1] += event.text;
      else out.push(event.text);
      key = k;
    } else {
      out.push(`<${event.type}>`);
      key = null;
    }
  }
  return out;
}
