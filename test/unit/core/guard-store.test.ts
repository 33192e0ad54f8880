import { DrizzleQueryError } from 'drizzle-orm/errors';
import { describe, expect, it } from 'vitest';
import { InfrastructureError, SessionNotFoundError } from '../../../src/core/errors/index.js';
import { guardStore, storeFailure } from '../../../src/core/ports/guard-store.js';
import type { SessionStore } from '../../../src/core/ports/session-store.js';

/** A Postgres error as pg raises it: its own words and a SQLSTATE `code`. */
function pgError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code, severity: 'ERROR' });
}

describe('storeFailure: what a store failure tells its caller', () => {
  it("names the operation and the database's own words, never the statement or its parameters", () => {
    const wrapped = new DrizzleQueryError('update "sessions" set "cancel_requested_at" = now() where "id" = $1', ['user-secret'], pgError('relation "sessions" does not exist', '42P01'));
    const error = storeFailure('requestCancel', wrapped);
    expect(error).toBeInstanceOf(InfrastructureError);
    expect(error).toMatchObject({
      code: 'system.infrastructure',
      retryable: true,
      message: 'store requestCancel failed: relation "sessions" does not exist (SQLSTATE 42P01)',
      details: { operation: 'requestCancel', sqlState: '42P01' },
      cause: wrapped,
    });
    expect(error.message).not.toMatch(/update|user-secret|Failed query/i);
  });

  it("a connection error with an empty message (Node's AggregateError of every address tried) reads by its name and code", () => {
    const refused = Object.assign(new AggregateError([], ''), { code: 'ECONNREFUSED' });
    const error = storeFailure('getSession', refused);
    expect(error.message).toBe('store getSession failed: AggregateError ECONNREFUSED');
    expect(error).toMatchObject({ details: { operation: 'getSession' } });
    expect((error as InfrastructureError).details).not.toHaveProperty('sqlState');
  });

  it('a wrapper without a cause, or wrappers nested past the bound, say only that the statement failed', () => {
    expect(storeFailure('loadHistory', new DrizzleQueryError('select secret', [])).message).toBe('store loadHistory failed: the statement failed');
    let nested: Error = new DrizzleQueryError('select 1', [], pgError('deep', '57014'));
    for (let i = 0; i < 10; i += 1) nested = new DrizzleQueryError(`select ${i} secret`, [], nested);
    expect(storeFailure('loadHistory', nested).message).toBe('store loadHistory failed: the statement failed');
  });

  it('a typed error passes unchanged; an odd thrown value is described without throwing', () => {
    const typed = new SessionNotFoundError('session s does not exist');
    expect(storeFailure('requestCancel', typed)).toBe(typed);
    expect(storeFailure('getInput', 'socket hang up').message).toBe('store getInput failed: socket hang up');
    expect(storeFailure('getInput', Object.create(null)).message).toBe('store getInput failed: unknown error');
  });
});

describe('guardStore', () => {
  it('turns a failed operation, thrown or rejected, into system.infrastructure and leaves results and typed errors alone', async () => {
    const store = {
      getSession: async () => null,
      requestCancel: async () => {
        throw pgError('terminating connection due to administrator command', '57P01');
      },
      countInputs: () => {
        throw new Error('pool is closed');
      },
      loadHistory: async () => {
        throw new SessionNotFoundError('gone');
      },
    } as unknown as SessionStore;
    const guarded = guardStore(store);
    await expect(guarded.getSession('s')).resolves.toBeNull();
    await expect(guarded.requestCancel('s')).rejects.toMatchObject({ code: 'system.infrastructure', message: 'store requestCancel failed: terminating connection due to administrator command (SQLSTATE 57P01)' });
    await expect(guarded.countInputs('s')).rejects.toMatchObject({ code: 'system.infrastructure', message: 'store countInputs failed: pool is closed' });
    await expect(guarded.loadHistory('s')).rejects.toBeInstanceOf(SessionNotFoundError);
  });
});
