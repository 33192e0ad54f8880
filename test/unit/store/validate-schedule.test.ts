import { describe, expect, it } from 'vitest';
import { MAX_TIMER_DELAY_MS } from '../../../src/fleet/timer-limits.js';
import { validateSchedule } from '../../../src/store/timers/validate-schedule.js';

const DAY_MS = 86_400_000;

describe('validateSchedule: how far a timer’s `at` may be', () => {
  it.each([
    ['a minute ago (fires at once)', -60_000],
    ['365 days ahead', 365 * DAY_MS],
    ['365 days ago', -365 * DAY_MS],
  ])('takes %s', (_, offset) => {
    const at = new Date(Date.now() + offset);
    expect(validateSchedule({ sessionId: 's1', at, note: 'x' })).toMatchObject({ at, delayMs: null });
  });

  it.each([
    ['past the bound ahead', MAX_TIMER_DELAY_MS + DAY_MS],
    ['past the bound behind', -MAX_TIMER_DELAY_MS - DAY_MS],
    ['an epoch in seconds read as milliseconds (January 1970)', Math.floor(Date.now() / 1000) - Date.now()],
  ])('refuses %s with input.invalid', (_, offset) => {
    expect(() => validateSchedule({ sessionId: 's1', at: new Date(Date.now() + offset), note: 'x' })).toThrow(
      expect.objectContaining({ code: 'input.invalid', message: expect.stringMatching(/^at must be a valid Date within 366 days of now/) as unknown }),
    );
  });

  it('refuses an invalid Date, naming it', () => {
    expect(() => validateSchedule({ sessionId: 's1', at: new Date('nope'), note: 'x' })).toThrow(/got an invalid Date$/);
  });
});
