import { describe, expect, it } from 'vitest';
import * as errors from '../../../src/core/errors/index.js';
import { assertNewSessionId, assertSessionId, isValidSessionId } from '../../../src/fleet/session-id.js';

describe('typed errors', () => {
  it('every error class has a stable, listed code, a fault and retryable', () => {
    type ErrorClass = (new (message: string) => errors.LoopfleetError) & { name: string };
    const classes = (Object.values(errors) as unknown[]).filter(
      (value): value is ErrorClass =>
        typeof value === 'function' && (value as { prototype: unknown }).prototype instanceof errors.LoopfleetError,
    );
    expect(classes.length).toBeGreaterThan(15);
    const codes = classes.map((Class) => {
      const error = new Class('x');
      expect(typeof error.retryable).toBe('boolean');
      expect(['input', 'config', 'model', 'system']).toContain(error.fault);
      expect(error.name).toBe(Class.name);
      return error.code;
    });
    expect([...codes].sort()).toEqual([...errors.ERROR_CODES].sort());
  });

  it('keeps the cause and serialises without the stack', () => {
    const cause = new Error('boom');
    const error = new errors.LeaseLostError('lost', { cause, details: { sessionId: 's' } });
    expect(error.cause).toBe(cause);
    expect(error.toJSON()).toEqual({ code: 'lease.lost', message: 'lost', retryable: false, details: { sessionId: 's' } });
  });

  it('converts unknown throwables once', () => {
    const converted = errors.toLoopfleetError('weird');
    expect(converted.code).toBe('internal');
    const typed = new errors.InputInvalidError('bad');
    expect(errors.toLoopfleetError(typed)).toBe(typed);
  });
});

describe('session ids', () => {
  it.each(['a', 'user:42', 'A-b_c.d:e', 'x'.repeat(128), 'seq', 'a:seq:1', 'a:deleted', 'a:finishedx'])('accepts %s', (id) => {
    expect(assertSessionId(id)).toBe(id);
    expect(assertNewSessionId(id)).toBe(id);
  });

  it.each(['a:seq', 'user:42:finished', ':seq'])('refuses %s for a new session (its stream would be another session\'s key), not for one stored', (id) => {
    expect(assertSessionId(id)).toBe(id);
    expect(() => assertNewSessionId(id)).toThrowError(expect.objectContaining({ code: 'session.invalid_id', message: expect.stringContaining('must not end in ":seq" or ":finished"') }));
  });

  it.each([
    ['', 'must not be empty'],
    ['x'.repeat(129), 'at most 128'],
    ['a b', 'may contain only'],
    ['a/b', 'may contain only'],
    ['é', 'may contain only'],
    [42, 'must be a string'],
    [null, 'must be a string'],
  ])('rejects %j with session.invalid_id', (id, message) => {
    expect(isValidSessionId(id)).toBe(false);
    expect(() => assertSessionId(id)).toThrowError(expect.objectContaining({ code: 'session.invalid_id', message: expect.stringContaining(message) }));
  });
});
