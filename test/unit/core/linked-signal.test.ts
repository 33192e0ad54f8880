import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { linkedSignal } from '../../../src/core/linked-signal.js';

describe('linkedSignal', () => {
  it('aborts with the reason of the first source that aborts, once', () => {
    const [a, b] = [new AbortController(), new AbortController()];
    const linked = linkedSignal([a.signal, b.signal]);
    const seen: unknown[] = [];
    linked.signal.addEventListener('abort', () => seen.push(linked.signal.reason));
    expect(linked.signal.aborted).toBe(false);
    b.abort(new Error('lease lost'));
    a.abort(new Error('shutdown'));
    expect(seen).toEqual([new Error('lease lost')]);
  });

  it('is aborted at once when a source already is', () => {
    const a = new AbortController();
    a.abort('done');
    const linked = linkedSignal([new AbortController().signal, a.signal]);
    expect([linked.signal.aborted, linked.signal.reason]).toEqual([true, 'done']);
  });

  it('after dispose, follows no source: a long-lived source keeps no listener of it', () => {
    const shutdown = new AbortController();
    const linked = linkedSignal([shutdown.signal]);
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(1);
    linked.dispose();
    linked.dispose();
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
    shutdown.abort();
    expect(linked.signal.aborted).toBe(false);
  });
});
