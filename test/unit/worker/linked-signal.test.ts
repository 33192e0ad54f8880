import { describe, expect, it } from 'vitest';
import { linkedSignal } from '../../../src/worker/linked-signal.js';

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
    const listeners: unknown[] = [];
    const add = shutdown.signal.addEventListener.bind(shutdown.signal);
    const remove = shutdown.signal.removeEventListener.bind(shutdown.signal);
    shutdown.signal.addEventListener = ((type: string, listener: unknown, options?: unknown) => (listeners.push(listener), add(type, listener as EventListener, options as AddEventListenerOptions))) as typeof add;
    shutdown.signal.removeEventListener = ((type: string, listener: unknown) => (listeners.splice(listeners.indexOf(listener), 1), remove(type, listener as EventListener))) as typeof remove;
    const linked = linkedSignal([shutdown.signal]);
    expect(listeners).toHaveLength(1);
    linked.dispose();
    linked.dispose();
    expect(listeners).toHaveLength(0);
    shutdown.abort();
    expect(linked.signal.aborted).toBe(false);
  });
});
