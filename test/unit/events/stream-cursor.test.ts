import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../../src/fleet/fleet-events.js';
import { decideGap, parseRetention, SeqGapTracker } from '../../../src/events/stream-gap.js';
import { assertCursor, compareStreamIds, isStreamId } from '../../../src/events/stream-id.js';

describe('stream ids', () => {
  it('compares numerically, part by part', () => {
    expect(compareStreamIds('9-0', '10-0')).toBeLessThan(0);
    expect(compareStreamIds('10-2', '10-10')).toBeLessThan(0);
    expect(compareStreamIds('10-0', '10')).toBe(0);
    expect(compareStreamIds('18446744073709551615-1', '18446744073709551615-0')).toBeGreaterThan(0);
  });

  it('accepts stream ids and $ as cursors and refuses anything else with input.invalid', () => {
    expect(isStreamId('1700000000000-3')).toBe(true);
    expect(() => assertCursor('$', { allowOnlyNew: true })).not.toThrow();
    expect(() => assertCursor('0', { allowOnlyNew: false })).not.toThrow();
    expect(() => assertCursor('$', { allowOnlyNew: false })).toThrow(expect.objectContaining({ code: 'input.invalid' }));
    // A cursor kept as a number (JavaScript callers) is refused with the typed error, not a TypeError.
    expect(isStreamId(1700000000000 as unknown as string)).toBe(false);
    expect(() => assertCursor(0 as unknown as string, { allowOnlyNew: false })).toThrow(expect.objectContaining({ code: 'input.invalid' }));
    for (const bad of ['', '-', '+', 'abc', '1-', '-1', '1-2-3', ' 1-0']) {
      expect(() => assertCursor(bad, { allowOnlyNew: true })).toThrow(expect.objectContaining({ code: 'input.invalid' }));
    }
  });

  it('refuses a part above 2^64 - 1, which Redis would reject, with input.invalid', () => {
    expect(isStreamId('18446744073709551615-18446744073709551615')).toBe(true);
    for (const bad of ['1-18446744073709551616', '18446744073709551616-0', '18446744073709551616', '99999999999999999999-0']) {
      expect(isStreamId(bad)).toBe(false);
      expect(() => assertCursor(bad, { allowOnlyNew: true })).toThrow(expect.objectContaining({ code: 'input.invalid' }));
    }
  });
});

describe('decideGap', () => {
  const retention = { firstEntryId: '100-0', lastGeneratedId: '200-0', maxDeletedId: '0-0' };

  it('sees no gap when the cursor entry is still retained', () => {
    expect(decideGap('100-0', retention)).toBeNull();
    expect(decideGap('150-3', retention)).toBeNull();
    expect(decideGap('200-0', retention)).toBeNull();
  });

  it('reports a cursor older than the oldest retained entry, resuming after the cursor', () => {
    expect(decideGap('50-0', retention)).toEqual({ kind: 'gap', after: '50-0', firstAvailable: '100-0', resumeFrom: '50-0' });
  });

  it('reports an entry deleted after the cursor', () => {
    expect(decideGap('150-0', { ...retention, maxDeletedId: '160-0' })).toMatchObject({ kind: 'gap', resumeFrom: '150-0' });
    expect(decideGap('150-0', { ...retention, maxDeletedId: '140-0' })).toBeNull();
  });

  it('reports a cursor the stream never generated (an earlier incarnation), resuming from the start', () => {
    expect(decideGap('300-0', retention)).toEqual({ kind: 'gap', after: '300-0', firstAvailable: '100-0', resumeFrom: '0' });
  });

  it('handles an existing empty stream', () => {
    const empty = { firstEntryId: null, lastGeneratedId: '200-0', maxDeletedId: '200-0' };
    expect(decideGap('200-0', empty)).toBeNull();
    expect(decideGap('150-0', empty)).toEqual({ kind: 'gap', after: '150-0', firstAvailable: null, resumeFrom: '150-0' });
  });

  it('reads XINFO STREAM replies, old servers included', () => {
    const reply = ['length', 1, 'last-generated-id', '5-0', 'max-deleted-entry-id', '3-0', 'first-entry', ['4-0', ['type', 'x']]];
    expect(parseRetention(reply)).toEqual({ firstEntryId: '4-0', lastGeneratedId: '5-0', maxDeletedId: '3-0' });
    expect(parseRetention(['length', 0, 'last-generated-id', '5-0', 'first-entry', null])).toEqual({
      firstEntryId: null,
      lastGeneratedId: '5-0',
      maxDeletedId: '0-0',
    });
  });
});

describe('SeqGapTracker', () => {
  const event = (id: string, seq: number): StreamEvent => ({ kind: 'event', id, type: 't', data: { sessionId: 's', inputSeq: null, seq } });

  it('is silent while seq follows on, and reports a jump with the ids around it', () => {
    const tracker = new SeqGapTracker();
    expect(tracker.next(event('1-0', 4))).toBeNull();
    expect(tracker.next(event('2-0', 5))).toBeNull();
    expect(tracker.next(event('5-0', 9))).toEqual({ kind: 'gap', after: '2-0', firstAvailable: '5-0', resumeFrom: '2-0' });
    expect(tracker.next(event('6-0', 10))).toBeNull();
  });

  it('reports a restart of seq (a re-created stream) and skips malformed entries', () => {
    const tracker = new SeqGapTracker();
    tracker.next(event('1-0', 7));
    expect(tracker.next(event('2-0', 1))).toMatchObject({ kind: 'gap', after: '1-0' });
    expect(tracker.next(event('3-0', 0))).toBeNull();
    expect(tracker.next(event('4-0', 40))).toBeNull();
  });
});
