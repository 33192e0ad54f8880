import { describe, expect, it } from 'vitest';
import { toAcceptRequest } from '../../../src/producer/add-request.js';

describe('toAcceptRequest (SessionQueue.add arguments)', () => {
  it('builds a send request; inputId and mode may come in data or in the options', () => {
    expect(toAcceptRequest('send', { sessionId: 's1', input: 'hi', options: { maxRounds: 3 } }, undefined)).toEqual({
      sessionId: 's1',
      kind: 'send',
      payload: { input: 'hi', options: { maxRounds: 3 } },
    });
    expect(toAcceptRequest('send', { sessionId: 's1', input: 'hi', inputId: 'a', mode: 'steer' }, {})).toMatchObject({ inputId: 'a', mode: 'steer' });
    expect(toAcceptRequest('send', { sessionId: 's1', input: 'hi' }, { inputId: 'b', mode: 'interrupt' })).toMatchObject({ inputId: 'b', mode: 'interrupt' });
    expect(toAcceptRequest('send', { sessionId: 's1', input: 'hi', inputId: 'c' }, { inputId: 'c' })).toMatchObject({ inputId: 'c' });
  });

  it('builds a resume request from submit or abortPending, leaving out undefined fields', () => {
    expect(toAcceptRequest('resume', { sessionId: 's1', submit: { interactionId: 'i', value: 1 }, abortPending: undefined }, undefined)).toEqual({
      sessionId: 's1',
      kind: 'resume',
      payload: { submit: { interactionId: 'i', value: 1 } },
    });
    expect(toAcceptRequest('resume', { sessionId: 's1' }, undefined).payload).toEqual({});
  });

  it('carries the agent the add names, outside the payload', () => {
    expect(toAcceptRequest('send', { sessionId: 's1', input: 'hi', agent: 'support.v2' }, undefined)).toEqual({
      sessionId: 's1',
      kind: 'send',
      payload: { input: 'hi' },
      agent: 'support.v2',
    });
    expect(toAcceptRequest('resume', { sessionId: 's1', agent: 'default' }, undefined)).toMatchObject({ agent: 'default', payload: {} });
  });

  it('carries the tenant the add names, outside the payload', () => {
    expect(toAcceptRequest('send', { sessionId: 's1', input: 'hi', tenant: 'acme:eu' }, undefined)).toEqual({
      sessionId: 's1',
      kind: 'send',
      payload: { input: 'hi' },
      tenant: 'acme:eu',
    });
    expect(toAcceptRequest('resume', { sessionId: 's1', tenant: 'default', agent: 'a' }, undefined)).toMatchObject({ tenant: 'default', agent: 'a', payload: {} });
  });

  it.each([
    ['send', { sessionId: 's1', input: 'x', tenant: '' }],
    ['send', { sessionId: 's1', input: 'x', tenant: 't'.repeat(129) }],
    ['resume', { sessionId: 's1', tenant: 'a/b' }],
    ['send', { sessionId: 's1', input: 'x', tenant: 7 }],
  ])('refuses %s %j with a bad tenant name', (kind, data) => {
    expect(() => toAcceptRequest(kind, data, undefined)).toThrow(expect.objectContaining({ code: 'input.invalid', message: expect.stringMatching(/tenant must be 1 to 128 characters/) }));
  });

  it.each([
    ['send', { sessionId: 's1', input: 'x', agent: '' }, undefined, 'input.invalid', /agent must be 1 to 64 characters/],
    ['send', { sessionId: 's1', input: 'x', agent: 'a'.repeat(65) }, undefined, 'input.invalid', /agent must be 1 to 64 characters/],
    ['resume', { sessionId: 's1', agent: 'a/b' }, undefined, 'input.invalid', /agent must be 1 to 64 characters/],
    ['send', { sessionId: 's1', input: 'x', agent: 7 }, undefined, 'input.invalid', /agent must be 1 to 64 characters/],
  ])('refuses %s %j with a bad agent name', (kind, data, options, code, message) => {
    expect(() => toAcceptRequest(kind, data, options)).toThrow(expect.objectContaining({ code, message: expect.stringMatching(message) }));
  });

  it.each([
    ['timer', { sessionId: 's1' }, undefined, 'input.invalid', /schedule it with queue.add\("timer", …\) or queue.timers.schedule/],
    ['drain', { sessionId: 's1' }, undefined, 'input.invalid', /unknown input kind "drain"/],
    [42, { sessionId: 's1' }, undefined, 'input.invalid', /unknown input kind/],
    ['send', null, undefined, 'input.invalid', /data must be an object/],
    ['send', ['s1'], undefined, 'input.invalid', /data must be an object/],
    ['send', { sessionId: 's1', input: 'x', sessionID: 's2' }, undefined, 'input.invalid', /unknown field\(s\) sessionID/],
    ['send', { sessionId: 's1', input: 'x' }, { delay: 5 }, 'input.invalid', /unknown field\(s\) delay/],
    ['send', { sessionId: 's1', input: 'x' }, 'fast', 'input.invalid', /options \(third argument\) must be an object/],
    ['send', { sessionId: 's1', input: 'x', mode: 'later' }, undefined, 'input.invalid', /mode must be one of queue, steer, interrupt/],
    ['send', { sessionId: 's1', input: 'x', mode: 'queue' }, { mode: 'steer' }, 'input.invalid', /mode is given twice/],
    ['send', { sessionId: 's1', input: 'x', inputId: 7 }, undefined, 'input.invalid', /inputId must be a string/],
    // null in data is a value, as in the options: not a random inputId, not the default mode.
    ['send', { sessionId: 's1', input: 'x', inputId: null }, undefined, 'input.invalid', /inputId must be a string/],
    ['send', { sessionId: 's1', input: 'x', mode: null }, undefined, 'input.invalid', /mode must be one of/],
    ['send', { sessionId: 'a b', input: 'x' }, undefined, 'session.invalid_id', /may contain only/],
    ['send', { input: 'x' }, undefined, 'session.invalid_id', /must be a string/],
    ['send', { sessionId: 'x'.repeat(129), input: 'x' }, undefined, 'session.invalid_id', /at most 128/],
  ])('rejects add(%j, %j, %j) with %s', (kind, data, options, code, message) => {
    expect(() => toAcceptRequest(kind, data, options)).toThrow(expect.objectContaining({ code, message: expect.stringMatching(message) }));
  });
});
