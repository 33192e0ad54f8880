import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { linkedSignal, whileLinked } from '../../../src/core/linked-signal.js';

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

describe('whileLinked', () => {
  async function* numbers(signal: AbortSignal): AsyncGenerator<number> {
    for (let n = 1; !signal.aborted; n += 1) yield n;
  }

  it('follows the closed signal itself when there is no own one, and links both while iterating', async () => {
    const [closed, own] = [new AbortController(), new AbortController()];
    const seen: AbortSignal[] = [];
    const follow = (signal: AbortSignal) => {
      seen.push(signal);
      return numbers(signal);
    };
    for await (const n of whileLinked(closed.signal, undefined, follow)) if (n === 2) break;
    expect(seen[0]).toBe(closed.signal);
    for await (const n of whileLinked(closed.signal, own.signal, follow)) {
      expect(getEventListeners(own.signal, 'abort')).toHaveLength(1);
      expect(getEventListeners(closed.signal, 'abort')).toHaveLength(1);
      if (n === 2) break;
    }
    expect(seen[1]).not.toBe(closed.signal);
    expect([getEventListeners(own.signal, 'abort'), getEventListeners(closed.signal, 'abort')]).toEqual([[], []]);
  });

  it('ends when the own signal aborts, and unlinks on a throw too', async () => {
    const [closed, own] = [new AbortController(), new AbortController()];
    const got: number[] = [];
    for await (const n of whileLinked(closed.signal, own.signal, numbers)) {
      got.push(n);
      if (n === 3) own.abort();
    }
    expect(got).toEqual([1, 2, 3]);
    const failing = whileLinked(closed.signal, new AbortController().signal, async function* () {
      yield 1;
      throw new Error('read failed');
    });
    await expect((async () => {
      for await (const _ of failing) void _;
    })()).rejects.toThrow('read failed');
    expect(getEventListeners(closed.signal, 'abort')).toHaveLength(0);
  });
});
