import { describe, expect, it } from 'vitest';
import { accept, childPayload, expectCode, running, runResult, snapshot, spawnRequest, type ContractContext } from '../../contract-helpers.js';

export function childScenarios(ctx: ContractContext): void {
  /** A running parent (input 1 claimed, `inputs` accepted) with a child spawned for each call. */
  async function parentWithChildren(label: string, calls: string[], inputs = 1) {
    const parent = await running(ctx, label, inputs);
    for (const call of calls) await ctx.store.spawnChild(spawnRequest(parent, call));
    return parent;
  }

  const childOf = (parent: { id: string }, call: string) => `${parent.id}:sub:${call}`;

  describe('claimNextInput: a waiting input', () => {
    it('claims nothing while it waits, not even the inputs behind it: as from an empty inbox', async () => {
      const parent = await parentWithChildren('wait-claim', ['call_a'], 2);
      const fenced = { sessionId: parent.id, leaseToken: parent.token };
      await ctx.store.parkInput(Object.assign({}, fenced, { inputSeq: 1, awaiting: ['call_a'] }));

      expect(await ctx.store.claimNextInput(fenced)).toBeNull();
      expect((await ctx.store.getInput(parent.id, 1))?.status).toBe('waiting');
      expect((await ctx.store.getInput(parent.id, 2))?.status).toBe('pending');
      expect((await ctx.store.getSession(parent.id))?.status).toBe('waiting_for_children');

      // A drain's first claim sees an empty inbox too (claimed null, not left to the caller).
      expect(await ctx.store.releaseLease({ sessionId: parent.id, token: parent.token, finishesPublished: true })).toBe(true);
      const drain = await ctx.store.acquireLeaseAndClaim({ sessionId: parent.id, owner: 'worker-b', ttlMs: 60_000 });
      expect(drain).toMatchObject({ acquired: true, claimed: null, finishesOwed: false });
      expect((await ctx.store.getSession(parent.id))?.status).toBe('waiting_for_children');
    });

    it('wakes it once every awaited result is in: woken, not resumed, attempts 1 again, awaiting cleared', async () => {
      const parent = await parentWithChildren('wait-wake', ['call_a', 'call_b'], 2);
      const fenced = { sessionId: parent.id, leaseToken: parent.token };
      // A second claim of the running input counts an attempt (and is no wake-up).
      expect(await ctx.store.claimNextInput(fenced)).toMatchObject({ resumed: true, woken: false, input: { seq: 1, attempts: 2 } });
      await ctx.store.parkInput(Object.assign({}, fenced, { inputSeq: 1, awaiting: ['call_a', 'call_b'] }));

      await ctx.store.deliverChildResult(childOf(parent, 'call_a'), childPayload(childOf(parent, 'call_a'), 'call_a'));
      expect(await ctx.store.claimNextInput(fenced)).toBeNull();
      await ctx.store.deliverChildResult(childOf(parent, 'call_b'), childPayload(childOf(parent, 'call_b'), 'call_b'));

      const woken = await ctx.store.claimNextInput(fenced);
      expect(woken).toMatchObject({ woken: true, resumed: false, input: { seq: 1, status: 'running', attempts: 1, awaiting: null }, session: { status: 'running' } });
      expect(woken?.pendingInputs).toBe(true);
      expect((await ctx.store.getSession(parent.id))?.status).toBe('running');
      // The results are in the inbox, done, steered into the input they answer.
      const results = await ctx.store.listInputs(parent.id, { afterSeq: 2 });
      expect(results.map((row) => [row.inputId, row.kind, row.status, row.steeredInto])).toEqual([
        ['child:call_a', 'child', 'done', 1],
        ['child:call_b', 'child', 'done', 1],
      ]);
    });

    it('wakes it when a cancel was asked for, results or not', async () => {
      const parent = await parentWithChildren('wait-cancel', ['call_a']);
      const fenced = { sessionId: parent.id, leaseToken: parent.token };
      await ctx.store.parkInput(Object.assign({}, fenced, { inputSeq: 1, awaiting: ['call_a'] }));
      expect(await ctx.store.claimNextInput(fenced)).toBeNull();
      await ctx.store.requestCancel(parent.id);
      expect(await ctx.store.claimNextInput(fenced)).toMatchObject({ woken: true, input: { seq: 1, status: 'running', attempts: 1 } });
    });

    it('is woken by a drain that takes over the lease, in its first claim', async () => {
      const parent = await parentWithChildren('wait-takeover', ['call_a']);
      await ctx.store.parkInput({ sessionId: parent.id, leaseToken: parent.token, inputSeq: 1, awaiting: ['call_a'] });
      await ctx.store.releaseLease({ sessionId: parent.id, token: parent.token, finishesPublished: true });
      await ctx.store.deliverChildResult(childOf(parent, 'call_a'), childPayload(childOf(parent, 'call_a'), 'call_a'));
      const drain = await ctx.store.acquireLeaseAndClaim({ sessionId: parent.id, owner: 'worker-b', ttlMs: 60_000 });
      expect(drain).toMatchObject({ acquired: true, claimed: { woken: true, resumed: false, input: { seq: 1, attempts: 1 } } });
    });
  });

  describe('spawnChild', () => {
    it('creates the child with its task as first input, once: a second call finds it and writes nothing', async () => {
      const parent = await running(ctx, 'spawn');
      const request = spawnRequest(parent, 'call_1', { task: 'summarise "x" ✓', wait: false, depth: 3, rootSessionId: `${parent.id}-root` });
      expect(await ctx.store.spawnChild(request)).toEqual({ kind: 'created', childSessionId: request.childSessionId });

      const child = await ctx.store.getSession(request.childSessionId);
      expect(child).toMatchObject({
        id: request.childSessionId,
        agent: 'default',
        status: 'idle',
        nextSeq: 1,
        parentSessionId: parent.id,
        rootSessionId: `${parent.id}-root`,
        depth: 3,
        spawn: { inputSeq: 1, toolCallId: 'call_1', wait: false },
        cancelRequestedAt: null,
        cascadeCancelledAt: null,
      });
      const inputs = await ctx.store.listInputs(request.childSessionId);
      expect(inputs).toHaveLength(1);
      expect(inputs[0]).toMatchObject({ seq: 1, inputId: 'spawn', kind: 'send', mode: 'queue', status: 'pending', attempts: 0, payload: { input: 'summarise "x" ✓' } });
      // The parent is a root: its own id is its root.
      expect(await ctx.store.getSession(parent.id)).toMatchObject({ parentSessionId: null, rootSessionId: parent.id, depth: 0, spawn: null });

      const before = await snapshot(ctx.store, request.childSessionId);
      expect(await ctx.store.spawnChild(Object.assign({}, request, { task: 'another task' }))).toEqual({ kind: 'existing', childSessionId: request.childSessionId });
      expect(await snapshot(ctx.store, request.childSessionId)).toEqual(before);

      // The child runs like any session.
      const lease = await ctx.store.acquireLeaseAndClaim({ sessionId: request.childSessionId, owner: 'worker-c', ttlMs: 60_000 });
      expect(lease).toMatchObject({ acquired: true, claimed: { input: { seq: 1, status: 'running' } } });
    });

    it('refuses past maxChildrenPerInput children of one parent input, writing nothing; another input has its own count', async () => {
      const parent = await running(ctx, 'spawn-limit', 2);
      for (const call of ['call_1', 'call_2']) expect((await ctx.store.spawnChild(spawnRequest(parent, call, { maxChildrenPerInput: 2 }))).kind).toBe('created');
      const third = spawnRequest(parent, 'call_3', { maxChildrenPerInput: 2 });
      expect(await ctx.store.spawnChild(third)).toEqual({ kind: 'refused', reason: 'too_many_children', limit: 2 });
      expect(await ctx.store.getSession(third.childSessionId)).toBeNull();
      // An existing child is found whatever the count.
      expect((await ctx.store.spawnChild(spawnRequest(parent, 'call_2', { maxChildrenPerInput: 2 }))).kind).toBe('existing');
      expect((await ctx.store.spawnChild(spawnRequest(parent, 'call_4', { inputSeq: 2, maxChildrenPerInput: 2 }))).kind).toBe('created');
      expect(await ctx.store.spawnChild(spawnRequest(parent, 'call_5', { maxChildrenPerInput: 3 }))).toMatchObject({ kind: 'created' });
    });

    it('is fenced by the parent lease: a stale token is lease.lost and creates nothing', async () => {
      const parent = await running(ctx, 'spawn-fenced');
      const request = spawnRequest(parent, 'call_1', { leaseToken: parent.token + 1000 });
      await expectCode(ctx.store.spawnChild(request), 'lease.lost');
      expect(await ctx.store.getSession(request.childSessionId)).toBeNull();
      // Even for a child that exists: the stale holder learns nothing.
      await ctx.store.spawnChild(spawnRequest(parent, 'call_1'));
      await expectCode(ctx.store.spawnChild(request), 'lease.lost');
    });

    it('refuses a bad request as an accept would, writing nothing: a NUL in the task, a bad child id', async () => {
      const parent = await running(ctx, 'spawn-invalid');
      const nul = spawnRequest(parent, 'call_1', { task: 'a\u0000b' });
      await expectCode(ctx.store.spawnChild(nul), 'input.invalid');
      expect(await ctx.store.getSession(nul.childSessionId)).toBeNull();
      await expectCode(ctx.store.spawnChild(spawnRequest(parent, 'call_2', { childSessionId: 'bad id' })), 'session.invalid_id');
      await expectCode(ctx.store.spawnChild(spawnRequest(parent, 'call_3', { childSessionId: `${parent.id}:seq` })), 'session.invalid_id');
      await expectCode(ctx.store.spawnChild(spawnRequest(parent, 'call 4', { childSessionId: `${parent.id}:sub:call_4` })), 'input.invalid');
      await expectCode(ctx.store.spawnChild(spawnRequest(parent, 'call_5', { maxChildrenPerInput: 0 })), 'input.invalid');
      expect(await ctx.store.listChildren(parent.id)).toEqual([]);
    });

    it('creates a child once when the same call spawns it concurrently', async () => {
      const parent = await running(ctx, 'spawn-race');
      const request = spawnRequest(parent, 'call_1');
      const outcomes = await Promise.all(Array.from({ length: 6 }, () => ctx.store.spawnChild(request)));
      expect(outcomes.filter((outcome) => outcome.kind === 'created')).toHaveLength(1);
      expect(outcomes.filter((outcome) => outcome.kind === 'existing')).toHaveLength(5);
      expect(await ctx.store.listInputs(request.childSessionId)).toHaveLength(1);
    });

    it('keeps the limit when calls of one input spawn concurrently', async () => {
      const parent = await running(ctx, 'spawn-race-limit');
      const outcomes = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((call) => ctx.store.spawnChild(spawnRequest(parent, call, { maxChildrenPerInput: 2 }))));
      expect(outcomes.filter((outcome) => outcome.kind === 'created')).toHaveLength(2);
      expect(await ctx.store.listChildren(parent.id)).toHaveLength(2);
    });
  });

  describe('deliverChildResult', () => {
    it('delivers a waiting call result once: done, steered into the input it answers; a second delivery writes nothing', async () => {
      const parent = await parentWithChildren('deliver', ['call_a'], 2);
      const child = childOf(parent, 'call_a');
      const payload = childPayload(child, 'call_a', { text: 'the answer', usage: Object.assign({}, runResult().usage, { children: runResult().usage }) });
      expect(await ctx.store.deliverChildResult(child, payload)).toEqual({ parentSessionId: parent.id, seq: 3 });

      const row = await ctx.store.getInputById(parent.id, 'child:call_a');
      expect(row).toMatchObject({ seq: 3, kind: 'child', mode: 'queue', status: 'done', steeredInto: 1, payload, result: null, awaiting: null });
      expect((await ctx.store.getSession(parent.id))?.nextSeq).toBe(3);

      expect(await ctx.store.deliverChildResult(child, Object.assign({}, payload, { text: 'again' }))).toBeNull();
      expect((await ctx.store.getSession(parent.id))?.nextSeq).toBe(3);
      expect((await ctx.store.getInputById(parent.id, 'child:call_a'))?.payload).toEqual(payload);
      // Inputs accepted after it keep the seqs gapless.
      expect((await accept(ctx.store, parent.id)).seq).toBe(4);
    });

    it('delivers nothing for a waiting call whose parent input has ended', async () => {
      const parent = await parentWithChildren('deliver-late', ['call_a']);
      await ctx.store.commitStep({ sessionId: parent.id, leaseToken: parent.token, input: { seq: 1, status: 'cancelled' } });
      const child = childOf(parent, 'call_a');
      expect(await ctx.store.deliverChildResult(child, childPayload(child, 'call_a'))).toBeNull();
      expect(await ctx.store.listInputs(parent.id)).toHaveLength(1);
      expect((await ctx.store.getSession(parent.id))?.nextSeq).toBe(1);
    });

    it('delivers a wait: false result as a pending steer input, even after the parent input ended', async () => {
      const parent = await running(ctx, 'deliver-nowait');
      const request = spawnRequest(parent, 'call_a', { wait: false });
      await ctx.store.spawnChild(request);
      await ctx.store.commitStep({ sessionId: parent.id, leaseToken: parent.token, input: { seq: 1, status: 'done', result: runResult() } });
      const payload = childPayload(request.childSessionId, 'call_a', { wait: false });
      expect(await ctx.store.deliverChildResult(request.childSessionId, payload)).toEqual({ parentSessionId: parent.id, seq: 2 });
      expect(await ctx.store.getInput(parent.id, 2)).toMatchObject({ inputId: 'child:call_a', kind: 'child', mode: 'steer', status: 'pending', steeredInto: null, payload });
      expect(await ctx.store.deliverChildResult(request.childSessionId, payload)).toBeNull();
      expect(await ctx.store.claimNextInput({ sessionId: parent.id, leaseToken: parent.token })).toMatchObject({ woken: false, input: { seq: 2, kind: 'child' } });
    });

    it('answers null for a session that is not a child, or does not exist', async () => {
      const root = await running(ctx, 'deliver-root');
      expect(await ctx.store.deliverChildResult(root.id, childPayload(root.id, 'call_a'))).toBeNull();
      expect(await ctx.store.deliverChildResult(ctx.id('nobody'), childPayload('x', 'call_a'))).toBeNull();
      expect(await ctx.store.listInputs(root.id)).toHaveLength(1);
    });

    it('gives a delivered result its host input outcome when the host finishes (I6)', async () => {
      const parent = await parentWithChildren('deliver-host', ['call_a']);
      const child = childOf(parent, 'call_a');
      const payload = childPayload(child, 'call_a');
      await ctx.store.deliverChildResult(child, payload);
      const result = runResult({ finalText: 'all done' });
      await ctx.store.commitStep({ sessionId: parent.id, leaseToken: parent.token, input: { seq: 1, status: 'done', result } });
      const row = await ctx.store.getInputById(parent.id, 'child:call_a');
      expect(row).toMatchObject({ status: 'done', steeredInto: 1, payload, result: Object.assign({}, result, { steeredInto: 1 }), errorCode: null });
      expect(row?.finishedAt).toEqual((await ctx.store.getInput(parent.id, 1))?.finishedAt);
      // It added nothing to the stats: its run is the host's.
      expect((await ctx.store.getSession(parent.id))?.stats.inputs).toBe(1);
    });
  });

  describe('the lease holder of a child', () => {
    it('spawns grandchildren under its own lease', async () => {
      const parent = await running(ctx, 'grand');
      await ctx.store.spawnChild(spawnRequest(parent, 'call_a'));
      const childId = childOf(parent, 'call_a');
      const lease = await ctx.store.acquireLease({ sessionId: childId, owner: 'worker-c', ttlMs: 60_000 });
      if (!lease.acquired) throw new Error('expected the child lease');
      const grand = spawnRequest({ id: childId, token: lease.token }, 'call_g', { rootSessionId: parent.id, depth: 2 });
      expect((await ctx.store.spawnChild(grand)).kind).toBe('created');
      expect(await ctx.store.getSession(grand.childSessionId)).toMatchObject({ parentSessionId: childId, rootSessionId: parent.id, depth: 2 });
      await expectCode(ctx.store.spawnChild(spawnRequest({ id: childId, token: parent.token }, 'call_h')), 'lease.lost');
    });
  });
}
