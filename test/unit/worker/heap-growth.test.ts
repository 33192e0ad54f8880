/**
 * `WORKER_HEAP_GROWTH_PERCENT` reaching V8: set unless it is 0 (V8's own factor) or node was started
 * with the flag itself. (Its effect on a worker's peak memory is measured, not asserted:
 * bench/concurrency.bench.ts, with 0 and with the default.)
 */
import v8 from 'node:v8';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { applyHeapGrowth } from '../../../src/worker/heap-growth.js';

describe('applyHeapGrowth', () => {
  afterEach(() => vi.restoreAllMocks());

  it('sets --heap-growing-percent to the percent', () => {
    const set = vi.spyOn(v8, 'setFlagsFromString').mockImplementation(() => undefined);
    expect(applyHeapGrowth(100, [])).toEqual({ applied: true, percent: 100 });
    expect(set).toHaveBeenCalledWith('--heap-growing-percent=100');
  });

  it('0 leaves V8 its own factor: nothing is set', () => {
    const set = vi.spyOn(v8, 'setFlagsFromString').mockImplementation(() => undefined);
    expect(applyHeapGrowth(0, [])).toEqual({ applied: false, reason: 'v8-default' });
    expect(set).not.toHaveBeenCalled();
  });

  it.each(['--heap-growing-percent=30', '--heap_growing_percent=30', '--heap-growing-percent'])('a flag given to node (%s) wins: nothing is set', (flag) => {
    const set = vi.spyOn(v8, 'setFlagsFromString').mockImplementation(() => undefined);
    expect(applyHeapGrowth(100, ['--enable-source-maps', flag])).toEqual({ applied: false, reason: 'node-flag', flag });
    expect(set).not.toHaveBeenCalled();
  });

  it('does not take a similar flag for it', () => {
    const set = vi.spyOn(v8, 'setFlagsFromString').mockImplementation(() => undefined);
    expect(applyHeapGrowth(50, ['--heap-growing-percentage=3', '--max-old-space-size=512'])).toEqual({ applied: true, percent: 50 });
    expect(set).toHaveBeenCalledOnce();
  });

  it.each([-1, 1.5, Number.NaN])('refuses %s', (percent) => {
    expect(() => applyHeapGrowth(percent, [])).toThrow(RangeError);
  });
});
