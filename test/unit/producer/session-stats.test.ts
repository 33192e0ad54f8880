import { describe, expect, it } from 'vitest';
import type { SessionStore } from '../../../src/core/ports/session-store.js';
import { readSessionStats } from '../../../src/producer/session-stats.js';
import { InMemorySessionStore } from '../../support/fakes/in-memory-session-store.js';

/** The store with every method call counted by name. */
function counting(inner: SessionStore): { store: SessionStore; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const store = new Proxy(inner, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.set(String(property), (calls.get(String(property)) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, calls };
}

describe('readSessionStats', () => {
  it('counts an inbox longer than a listInputs page with one countInputs call, never listing inputs', async () => {
    const inner = new InMemorySessionStore();
    for (let i = 0; i < 2_345; i += 1) await inner.acceptInput({ sessionId: 's1', kind: 'send', payload: { input: `m${i}` }, maxBytes: 10_000 });
    const lease = await inner.acquireLeaseAndClaim({ sessionId: 's1', owner: 'w', ttlMs: 60_000 });
    if (!lease.acquired) throw new Error('not leased');
    await inner.commitStep({ sessionId: 's1', leaseToken: lease.token, input: { seq: 1, status: 'failed' } });
    await inner.claimNextInput({ sessionId: 's1', leaseToken: lease.token });

    const { store, calls } = counting(inner);
    const report = await readSessionStats(store, 's1');
    expect(report.inputs).toEqual({ pending: 2_343, running: 1, waiting: 0, done: 0, failed: 1, cancelled: 0, total: 2_345 });
    expect(report).toMatchObject({ sessionId: 's1', status: 'running', totals: { inputs: 1 } });
    expect(Object.fromEntries(calls)).toEqual({ getSession: 1, countInputs: 1, listChildren: 1 });
  });

  it('refuses a session that does not exist with session.not_found', async () => {
    await expect(readSessionStats(new InMemorySessionStore(), 'nobody')).rejects.toMatchObject({ code: 'session.not_found' });
  });
});
