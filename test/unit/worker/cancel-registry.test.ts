import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { CancelRegistry, requestedDuringRun } from '../../../src/worker/cancel-registry.js';

const silent = pino({ level: 'silent' });

/** A read whose answers the test gives one at a time. */
function heldReads() {
  const waiting: Array<(value: Date | null) => void> = [];
  const read = vi.fn(() => new Promise<Date | null>((resolve) => waiting.push(resolve)));
  return { read, answer: (value: Date | null) => waiting.shift()!(value), get waiting() { return waiting.length; } };
}

/** A message on the cancel channel only wakes a read of the durable request (docs/invariants.md, S2). */
describe('CancelRegistry', () => {
  const started = new Date(1_000);

  it('cancels the run only when the durable request was made after its input started', async () => {
    for (const [requested, cancels] of [
      [null, false],
      [new Date(999), false],
      [new Date(1_000), true],
      [new Date(5_000), true],
    ] as const) {
      const registry = new CancelRegistry(async () => requested, silent);
      const controller = new AbortController();
      registry.register('s1', controller, started);
      expect(await registry.signalled('s1')).toBe(cancels);
      expect(controller.signal.aborted).toBe(cancels);
    }
  });

  it('reads nothing for a session it does not run, nor once the run is unregistered', async () => {
    const read = vi.fn(async () => new Date(5_000));
    const registry = new CancelRegistry(read, silent);
    expect(await registry.signalled('elsewhere')).toBe(false);
    const controller = new AbortController();
    registry.register('s1', controller, started)();
    expect(await registry.signalled('s1')).toBe(false);
    expect(read).not.toHaveBeenCalled();
    expect(controller.signal.aborted).toBe(false);
  });

  it('keeps one read per session in flight: messages meanwhile make one more read once it answers', async () => {
    const reads = heldReads();
    const registry = new CancelRegistry(reads.read, silent);
    const controller = new AbortController();
    registry.register('s1', controller, started);
    const first = registry.signalled('s1');
    const flood = await Promise.all(Array.from({ length: 50 }, () => registry.signalled('s1')));
    expect(flood.every((cancelled) => !cancelled)).toBe(true);
    expect(reads.read).toHaveBeenCalledTimes(1);
    // The request landed after the first read began: the read that follows sees it.
    reads.answer(null);
    await vi.waitFor(() => expect(reads.waiting).toBe(1));
    reads.answer(new Date(2_000));
    expect(await first).toBe(true);
    expect(reads.read).toHaveBeenCalledTimes(2);
    expect(controller.signal.aborted).toBe(true);
  });

  it('leaves alone a run that replaced the one the request was read for, and survives a failed read', async () => {
    const reads = heldReads();
    const registry = new CancelRegistry(reads.read, silent);
    const old = new AbortController();
    const unregister = registry.register('s1', old, started);
    const check = registry.signalled('s1');
    unregister();
    const next = new AbortController();
    registry.register('s1', next, new Date(3_000));
    reads.answer(new Date(2_000));
    expect(await check).toBe(false);
    expect(old.signal.aborted || next.signal.aborted).toBe(false);

    const failing = new CancelRegistry(async () => Promise.reject(new Error('postgres down')), silent);
    failing.register('s1', next, started);
    expect(await failing.signalled('s1')).toBe(false);
    expect(next.signal.aborted).toBe(false);
  });

  it('applies the rule the durable flag uses everywhere', () => {
    expect(requestedDuringRun(new Date(1_000), null)).toBe(false);
    expect(requestedDuringRun(null, started)).toBe(false);
    expect(requestedDuringRun(started, started)).toBe(true);
  });
});
