import { describe, expect, it } from 'vitest';
import { CliUsageError } from '../../../src/cli/command-line.js';
import { formatDuration, parseDuration } from '../../../src/cli/duration.js';

const ANY = { min: 0, max: Number.MAX_SAFE_INTEGER };

describe('parseDuration', () => {
  it.each([
    ['90s', 90_000],
    ['5m', 300_000],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
    ['250ms', 250],
    ['0', 0],
    ['1500', 1500],
  ])('%s is %d ms', (raw, ms) => {
    expect(parseDuration('wait', raw, ANY)).toBe(ms);
  });

  it('bare digits take the unit the command gives', () => {
    expect(parseDuration('wait', '30', ANY, 's')).toBe(30_000);
  });

  it.each(['', '5 m', '-1s', '1.5h', '5min', 'm', '1e3', '0x10', 'soon'])('%j is a usage error naming the option', (raw) => {
    expect(() => parseDuration('wait', raw, ANY)).toThrow(CliUsageError);
    expect(() => parseDuration('wait', raw, ANY)).toThrow(`--wait must be a duration such as 90s, 5m, 2h, 1d or 250ms; got ${JSON.stringify(raw)}`);
  });

  it('out of range names the range in durations', () => {
    expect(() => parseDuration('every', '999ms', { min: 1000, max: 86_400_000 })).toThrow('--every must be from 1s to 1d; got "999ms"');
    expect(() => parseDuration('every', '25h', { min: 1000, max: 86_400_000 })).toThrow('--every must be from 1s to 1d');
  });

  it('formats the shortest exact form', () => {
    expect([0, 1, 1000, 90_000, 300_000, 7_200_000, 86_400_000, 1500].map(formatDuration)).toEqual(['0ms', '1ms', '1s', '90s', '5m', '2h', '1d', '1500ms']);
  });
});
