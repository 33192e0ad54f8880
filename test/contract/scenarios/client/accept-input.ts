import { describe, expect, it } from 'vitest';
import type { AcceptInputParams } from '../../../../src/core/ports/session-store.js';
import { accept, CLOCK_SLACK_MS, expectCode, type ContractContext } from '../../contract-helpers.js';

const MAX_BYTES = 1000;

export function acceptInputScenarios(ctx: ContractContext): void {
  describe('acceptInput', () => {
    it('creates the session and numbers inputs 1, 2, 3 with the fields it was given', async () => {
      const id = ctx.id('order');
      const before = ctx.now();
      const first = await accept(ctx.store, id, { payload: { input: 'one' } });
      const second = await accept(ctx.store, id, { kind: 'resume', mode: 'steer', payload: { nested: { a: [1, 'b', null] } }, originJobId: 'job-7' });
      const third = await accept(ctx.store, id, { kind: 'timer', mode: 'interrupt', inputId: 'bull:q/job-1_x.y@z' });
      expect([first, second, third].map((r) => [r.sessionId, r.seq, r.duplicate])).toEqual([
        [id, 1, false],
        [id, 2, false],
        [id, 3, false],
      ]);
      expect(first.inputId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(third.inputId).toBe('bull:q/job-1_x.y@z');

      const inputs = await ctx.store.listInputs(id);
      expect(inputs[0]).toMatchObject({ sessionId: id, seq: 1, inputId: first.inputId, kind: 'send', mode: 'queue', originJobId: null });
      expect(inputs[1]).toEqual({
        sessionId: id,
        seq: 2,
        inputId: second.inputId,
        kind: 'resume',
        mode: 'steer',
        payload: { nested: { a: [1, 'b', null] } },
        status: 'pending',
        attempts: 0,
        steeredInto: null,
        result: null,
        awaiting: null,
        errorCode: null,
        errorMessage: null,
        originJobId: 'job-7',
        traceContext: null,
        acceptedAt: expect.any(Date),
        startedAt: null,
        finishedAt: null,
      });
      expect(inputs[2]).toMatchObject({ kind: 'timer', mode: 'interrupt' });
      const times = inputs.map((input) => input.acceptedAt.getTime());
      expect(times).toEqual([...times].sort((a, b) => a - b));
      expect(times[0]).toBeGreaterThanOrEqual(before - CLOCK_SLACK_MS);
      expect(await ctx.store.getSession(id)).toMatchObject({ id, agent: 'default', status: 'idle', nextSeq: 3 });
    });

    it('keeps the trace context an input carries, and drops a malformed one without refusing the input', async () => {
      const id = ctx.id('trace');
      const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      await accept(ctx.store, id, { traceContext: { traceparent, tracestate: 'vendor=1' } });
      await accept(ctx.store, id, { traceContext: { traceparent: 'not-a-traceparent' } });
      await accept(ctx.store, id, { traceContext: { traceparent: '00-00000000000000000000000000000000-b7ad6b7169203331-01' } });
      const inputs = await ctx.store.listInputs(id);
      expect(inputs.map((input) => input.traceContext)).toEqual([{ traceparent, tracestate: 'vendor=1' }, null, null]);
      expect((await ctx.store.getInput(id, 1))?.traceContext).toEqual({ traceparent, tracestate: 'vendor=1' });
    });

    it('returns the original seq for a repeated input id, keeps the first payload and burns no seq', async () => {
      const id = ctx.id('idem');
      const original = await accept(ctx.store, id, { inputId: 'job:42', payload: { input: 'first' } });
      const again = await accept(ctx.store, id, { inputId: 'job:42', kind: 'resume', payload: { input: 'retry' } });
      expect(again).toEqual({ sessionId: id, seq: original.seq, inputId: 'job:42', duplicate: true, tenant: 'default' });
      expect(await ctx.store.getInputById(id, 'job:42')).toMatchObject({ seq: 1, kind: 'send', payload: { input: 'first' } });
      expect((await accept(ctx.store, id)).seq).toBe(2);
      expect((await ctx.store.listInputs(id)).length).toBe(2);
    });

    it('keeps an input id per session: the same id in another session is a new input', async () => {
      const a = ctx.id('scope-a');
      const b = ctx.id('scope-b');
      await accept(ctx.store, a, { inputId: 'shared' });
      await accept(ctx.store, a, { inputId: 'other' });
      expect(await accept(ctx.store, b, { inputId: 'shared' })).toMatchObject({ sessionId: b, seq: 1, duplicate: false });
    });

    it('refuses a payload over maxBytes (UTF-8 bytes) with input.too_large, creating nothing; exactly maxBytes is fine', async () => {
      const id = ctx.id('big');
      await expectCode(accept(ctx.store, id, { payload: { input: 'é'.repeat(500) }, maxBytes: MAX_BYTES }), 'input.too_large');
      expect(await ctx.store.getSession(id)).toBeNull();
      const exact = { input: 'a'.repeat(MAX_BYTES - JSON.stringify({ input: '' }).length) };
      expect((await accept(ctx.store, id, { payload: exact, maxBytes: MAX_BYTES })).seq).toBe(1);
    });

    it('refuses a large input into an existing session without touching it', async () => {
      const id = ctx.id('big-existing');
      await accept(ctx.store, id);
      const before = await ctx.store.getSession(id);
      await expectCode(accept(ctx.store, id, { payload: { input: 'x'.repeat(200) }, maxBytes: 100 }), 'input.too_large');
      expect(await ctx.store.getSession(id)).toEqual(before);
      expect((await ctx.store.listInputs(id)).length).toBe(1);
    });

    it.each([
      ['an unknown kind', { kind: 'shout' }],
      ['an unknown mode', { mode: 'later' }],
      ['an empty input id', { inputId: '' }],
      ['a 201-character input id', { inputId: 'i'.repeat(201) }],
      ['an input id with a space', { inputId: 'a b' }],
      ['a non-string input id', { inputId: 7 }],
      ['an array payload', { payload: ['x'] }],
      ['a null payload', { payload: null }],
      ['a string payload', { payload: 'text' }],
      ['a class-instance payload', { payload: new Date() }],
      ['a payload with a NUL character', { payload: { text: 'a\u0000b' } }],
      ['a payload with an unpaired surrogate', { payload: { text: 'a\ud800b' } }],
      ['a payload with a lone low surrogate in a key', { payload: { ['\udc00']: 'x' } }],
      ['a payload JSON cannot hold', { payload: { n: 10n } }],
      ['a zero maxBytes', { maxBytes: 0 }],
      ['an empty originJobId', { originJobId: '' }],
    ])('refuses %s with input.invalid and creates nothing', async (_label, overrides) => {
      const id = ctx.id('bad');
      await expectCode(accept(ctx.store, id, overrides as Partial<AcceptInputParams>), 'input.invalid');
      expect(await ctx.store.getSession(id)).toBeNull();
    });

    it('gives 20 concurrent accepts seqs 1..20, gapless, each caller the seq its input landed at', async () => {
      const id = ctx.id('race');
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => accept(ctx.store, id, { inputId: `in-${i}`, payload: { i } })));
      expect(results.map((r) => r.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(results.every((r) => !r.duplicate)).toBe(true);
      const inputs = await ctx.store.listInputs(id);
      expect(inputs.map((input) => input.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      for (const result of results) expect(inputs[result.seq - 1]?.inputId).toBe(result.inputId);
      expect((await ctx.store.getSession(id))?.nextSeq).toBe(20);
    });

    it('gives 10 concurrent accepts of one input id a single input and a single seq', async () => {
      const id = ctx.id('same');
      await accept(ctx.store, id, { inputId: 'before' });
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => accept(ctx.store, id, { inputId: 'same-id', payload: { i } })));
      expect(new Set(results.map((r) => r.seq))).toEqual(new Set([2]));
      expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
      expect((await ctx.store.listInputs(id)).map((input) => input.inputId)).toEqual(['before', 'same-id']);
      expect((await ctx.store.getSession(id))?.nextSeq).toBe(2);
    });
  });
}
