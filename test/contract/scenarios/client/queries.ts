import { describe, expect, it } from 'vitest';
import type { ListInputsOptions } from '../../../../src/core/ports/session-store.js';
import { accept, expectCode, leased, type ContractContext } from '../../contract-helpers.js';

export function queryScenarios(ctx: ContractContext): void {
  describe('reading inputs', () => {
    /** Inputs 1–6: 1 done, 2 failed, 3 running, 4–6 pending. */
    async function inbox(label: string): Promise<string> {
      const { id, token } = await leased(ctx, label);
      for (let i = 1; i <= 6; i += 1) await accept(ctx.store, id, { inputId: `in-${i}` });
      for (const status of ['done', 'failed'] as const) {
        const claimed = await ctx.store.claimNextInput({ sessionId: id, leaseToken: token });
        await ctx.store.commitStep({ sessionId: id, leaseToken: token, input: { seq: claimed?.input.seq ?? 0, status } });
      }
      await ctx.store.claimNextInput({ sessionId: id, leaseToken: token });
      return id;
    }

    it('lists inputs in seq order, filtered by one status or several, paged by afterSeq and limit', async () => {
      const id = await inbox('list');
      const seqs = async (options?: ListInputsOptions) => (await ctx.store.listInputs(id, options)).map((input) => input.seq);
      expect(await seqs()).toEqual([1, 2, 3, 4, 5, 6]);
      expect(await seqs({ status: 'pending' })).toEqual([4, 5, 6]);
      expect(await seqs({ status: 'running' })).toEqual([3]);
      expect(await seqs({ status: ['done', 'failed'] })).toEqual([1, 2]);
      expect(await seqs({ status: ['pending', 'running'], limit: 2 })).toEqual([3, 4]);
      expect(await seqs({ status: ['pending', 'running'], afterSeq: 4, limit: 1 })).toEqual([5]);
      expect(await seqs({ afterSeq: 6 })).toEqual([]);
      expect(await seqs({ status: 'cancelled' })).toEqual([]);
      expect(await seqs({ status: [] })).toEqual([]);
      expect(await seqs({ limit: 1000 })).toEqual([1, 2, 3, 4, 5, 6]);
    });

    it('with affectsRun, lists only inputs that change a running one (steer, interrupt, timer), past any backlog of queued ones', async () => {
      const id = ctx.id('affects-run');
      for (let i = 0; i < 120; i += 1) await accept(ctx.store, id, { inputId: `queued-${i}` });
      const steer = await accept(ctx.store, id, { inputId: 'steer', mode: 'steer' });
      const interrupt = await accept(ctx.store, id, { inputId: 'interrupt', mode: 'interrupt' });
      const timer = await accept(ctx.store, id, { kind: 'timer', payload: { timerId: 't', note: 'n', fireCount: 1 }, inputId: 'timer' });
      const later = await ctx.store.listInputs(id, { status: 'pending', afterSeq: 1, limit: 100, affectsRun: true });
      expect(later.map((input) => input.seq)).toEqual([steer.seq, interrupt.seq, timer.seq]);
      expect((await ctx.store.listInputs(id, { status: 'pending', afterSeq: 1, limit: 100 })).at(-1)!.seq).toBe(101);
      await expectCode(ctx.store.listInputs(id, { affectsRun: 'yes' as unknown as boolean }), 'input.invalid');
    });

    it('pages 100 inputs at a time by default', async () => {
      const id = ctx.id('default-limit');
      await Promise.all(Array.from({ length: 105 }, (_, i) => accept(ctx.store, id, { inputId: `in-${i}` })));
      const page = await ctx.store.listInputs(id);
      expect(page.map((input) => input.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
      expect((await ctx.store.listInputs(id, { afterSeq: 100 })).map((input) => input.seq)).toEqual([101, 102, 103, 104, 105]);
    });

    it.each([
      ['a zero limit', { limit: 0 }],
      ['a limit over 1000', { limit: 1001 }],
      ['a fractional limit', { limit: 1.5 }],
      ['a negative afterSeq', { afterSeq: -1 }],
      ['an unknown status', { status: 'lost' }],
    ])('refuses %s with input.invalid', async (_label, options) => {
      await expectCode(ctx.store.listInputs(ctx.id('badlist'), options as ListInputsOptions), 'input.invalid');
    });

    it('counts inputs by status in one call, every status present, steered ones as done', async () => {
      const id = await inbox('count');
      expect(await ctx.store.countInputs(id)).toEqual({ pending: 3, running: 1, waiting: 0, done: 1, failed: 1, cancelled: 0 });
      const token = (await ctx.store.getSession(id))!.lease.token!;
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, steer: { seqs: [4], intoInputSeq: 3 } });
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, input: { seq: 3, status: 'cancelled' } });
      expect(await ctx.store.countInputs(id)).toEqual({ pending: 2, running: 0, waiting: 0, done: 2, failed: 1, cancelled: 1 });
      expect(await ctx.store.countInputs(ctx.id('nobody'))).toEqual({ pending: 0, running: 0, waiting: 0, done: 0, failed: 0, cancelled: 0 });
    });

    it('counts past a page of listInputs (1000 inputs)', async () => {
      const id = ctx.id('count-many');
      await Promise.all(Array.from({ length: 1005 }, (_, i) => accept(ctx.store, id, { inputId: `in-${i}` })));
      expect(await ctx.store.countInputs(id)).toEqual({ pending: 1005, running: 0, waiting: 0, done: 0, failed: 0, cancelled: 0 });
    });

    it('gets one input by seq or by input id, and null when there is none', async () => {
      const id = await inbox('get');
      const bySeq = await ctx.store.getInput(id, 3);
      expect(bySeq).toMatchObject({ sessionId: id, seq: 3, inputId: 'in-3', status: 'running' });
      expect(await ctx.store.getInputById(id, 'in-3')).toEqual(bySeq);
      expect(await ctx.store.getInput(id, 7)).toBeNull();
      expect(await ctx.store.getInputById(id, 'in-7')).toBeNull();
      expect(await ctx.store.getInput(ctx.id('nobody'), 1)).toBeNull();
      expect(await ctx.store.getInputById(ctx.id('nobody'), 'in-1')).toBeNull();
      await expectCode(ctx.store.getInput(id, 0), 'input.invalid');
      await expectCode(ctx.store.getInput(id, 1.5), 'input.invalid');
      await expectCode(ctx.store.getInputById(id, 'in 3'), 'input.invalid');
      await expectCode(ctx.store.getUsageRounds(id, 0), 'input.invalid');
    });

    it('reads empty, not an error, from a session that does not exist', async () => {
      const id = ctx.id('nobody');
      expect(await ctx.store.loadWindow(id)).toEqual([]);
      expect(await ctx.store.loadHistory(id, { includeCompacted: true })).toEqual([]);
      expect(await ctx.store.listInputs(id)).toEqual([]);
      expect(await ctx.store.countInputs(id)).toEqual({ pending: 0, running: 0, waiting: 0, done: 0, failed: 0, cancelled: 0 });
      expect(await ctx.store.loadOpenToolCalls(id)).toEqual([]);
      expect(await ctx.store.getUsageRounds(id)).toEqual([]);
    });
  });

  describe('cancel requests', () => {
    it('keeps the first request time, and only the lease holder clears it', async () => {
      const { id, token } = await leased(ctx, 'cancel');
      expect((await ctx.store.getSession(id))?.cancelRequestedAt).toBeNull();
      const first = await ctx.store.requestCancel(id);
      expect(first).toBeInstanceOf(Date);
      expect(await ctx.store.requestCancel(id)).toEqual(first);
      expect((await ctx.store.getSession(id))?.cancelRequestedAt).toEqual(first);

      await ctx.store.clearCancel({ sessionId: id, leaseToken: token });
      expect((await ctx.store.getSession(id))?.cancelRequestedAt).toBeNull();
      await ctx.store.clearCancel({ sessionId: id, leaseToken: token });
      const again = await ctx.store.requestCancel(id);
      expect(again.getTime()).toBeGreaterThanOrEqual(first.getTime());
      expect((await ctx.store.getSession(id))?.cancelRequestedAt).toEqual(again);
    });

    it('reads the waiting request: none, then the time of the request kept, none again once the holder cleared it', async () => {
      const { id, token } = await leased(ctx, 'cancel-read');
      expect(await ctx.store.readCancelRequest(id)).toBeNull();
      const requested = await ctx.store.requestCancel(id);
      expect(await ctx.store.readCancelRequest(id)).toEqual(requested);
      await ctx.store.requestCancel(id);
      expect(await ctx.store.readCancelRequest(id)).toEqual(requested);
      await ctx.store.clearCancel({ sessionId: id, leaseToken: token });
      expect(await ctx.store.readCancelRequest(id)).toBeNull();
      expect(await ctx.store.readCancelRequest(ctx.id('nobody'))).toBeNull();
    });

    it('refuses a cancel request for a session that does not exist with session.not_found', async () => {
      const id = ctx.id('nobody');
      await expectCode(ctx.store.requestCancel(id), 'session.not_found');
      expect(await ctx.store.getSession(id)).toBeNull();
    });
  });
}
