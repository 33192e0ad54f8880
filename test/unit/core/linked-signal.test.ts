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

  /** Yields `first`, then waits for news that never comes: only its signal ends the wait. Records how it ended. */
  function quietAfter(first: number, ended: { aborted?: boolean }) {
    return async function* quiet(signal: AbortSignal): AsyncGenerator<number> {
      try {
        yield first;
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      } finally {
        ended.aborted = signal.aborted;
      }
    };
  }

  const listeners = (...signals: AbortSignal[]) => signals.map((signal) => getEventListeners(signal, 'abort').length);

  it('links every source given while iterating, and unlinks them when the iteration ends', async () => {
    const [closed, own] = [new AbortController(), new AbortController()];
    for await (const n of whileLinked([closed.signal, undefined], numbers)) {
      expect(listeners(closed.signal)).toEqual([1]);
      if (n === 2) break;
    }
    for await (const n of whileLinked([closed.signal, own.signal], numbers)) {
      expect(listeners(closed.signal, own.signal)).toEqual([1, 1]);
      if (n === 2) break;
    }
    expect(listeners(closed.signal, own.signal)).toEqual([0, 0]);
  });

  it('links nothing for an iteration that never starts', async () => {
    const closed = new AbortController();
    const never = whileLinked([closed.signal], numbers);
    expect(listeners(closed.signal)).toEqual([0]);
    expect(await never.return()).toEqual({ done: true, value: undefined });
    expect(await never.next()).toEqual({ done: true, value: undefined });
    expect(listeners(closed.signal)).toEqual([0]);
  });

  it('ends when a source aborts, and unlinks on a throw too', async () => {
    const [closed, own] = [new AbortController(), new AbortController()];
    const got: number[] = [];
    for await (const n of whileLinked([closed.signal, own.signal], numbers)) {
      got.push(n);
      if (n === 3) own.abort();
    }
    expect(got).toEqual([1, 2, 3]);
    const failing = whileLinked([closed.signal, new AbortController().signal], async function* () {
      yield 1;
      throw new Error('read failed');
    });
    await expect((async () => {
      for await (const _ of failing) void _;
    })()).rejects.toThrow('read failed');
    expect(listeners(closed.signal)).toEqual([0]);
  });

  it('return() while a next() waits ends the wait at once: that next() resolves done, and the return with it', async () => {
    const closed = new AbortController();
    const ended: { aborted?: boolean } = {};
    const items = whileLinked([closed.signal], quietAfter(1, ended));
    expect(await items.next()).toEqual({ done: false, value: 1 });
    const waiting = items.next();
    const returned = items.return(undefined);
    expect(await waiting).toEqual({ done: true, value: undefined });
    expect(await returned).toEqual({ done: true, value: undefined });
    expect(ended.aborted).toBe(true);
    expect(closed.signal.aborted).toBe(false);
    expect(listeners(closed.signal)).toEqual([0]);
  });

  it('throw() while a next() waits ends the wait too, then throws the error', async () => {
    const ended: { aborted?: boolean } = {};
    const items = whileLinked([undefined], quietAfter(1, ended));
    await items.next();
    const waiting = items.next();
    const error = new Error('consumer failed');
    const thrown = items.throw(error);
    expect(await waiting).toEqual({ done: true, value: undefined });
    await expect(thrown).rejects.toBe(error);
    expect(ended.aborted).toBe(true);
  });

  it('return() between items (a break) ends the iteration without aborting its signal', async () => {
    const ended: { aborted?: boolean } = {};
    for await (const n of whileLinked([new AbortController().signal], quietAfter(7, ended))) {
      expect(n).toBe(7);
      break;
    }
    expect(ended).toEqual({ aborted: false });
    delete ended.aborted;
    const items = whileLinked([new AbortController().signal], quietAfter(7, ended));
    expect(await items.next()).toEqual({ done: false, value: 7 });
    expect(await items.return(undefined)).toEqual({ done: true, value: undefined });
    expect(ended.aborted).toBe(false);
  });

  it('leaving an `await using` scope ends it like return(): at once while a next() waits, and without aborting between items', async () => {
    const closed = new AbortController();
    const ended: { aborted?: boolean } = {};
    let waiting: Promise<IteratorResult<number, void>> | undefined;
    {
      await using items = whileLinked([closed.signal], quietAfter(1, ended));
      expect(await items.next()).toEqual({ done: false, value: 1 });
      waiting = items.next();
    }
    expect(await waiting).toEqual({ done: true, value: undefined });
    expect(ended.aborted).toBe(true);
    expect(listeners(closed.signal)).toEqual([0]);
    delete ended.aborted;
    {
      await using items = whileLinked([closed.signal], quietAfter(2, ended));
      expect(await items.next()).toEqual({ done: false, value: 2 });
    }
    expect(ended.aborted).toBe(false);
    expect(listeners(closed.signal)).toEqual([0]);
    // A scope left before the iteration started links and ends nothing.
    {
      await using _unused = whileLinked([closed.signal], quietAfter(3, ended));
    }
    expect(listeners(closed.signal)).toEqual([0]);
  });
});
