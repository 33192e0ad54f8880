import { describe, expect, it } from 'vitest';
import type { Message } from '../../../../src/core/messages.js';
import type { StepCommit } from '../../../../src/core/ports/session-store.js';
import { assistant, expectCode, leased, PENDING, running, snapshot, toolCall, usageRound, user, type ContractContext } from '../../contract-helpers.js';

/** Every message shape the loop writes; "42" and "null" must stay strings (never re-parsed as JSON). */
const SHAPES: Message[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: '42', name: 'ann' },
  { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', url: 'https://x/y.png', mediaType: 'image/png' }] },
  { role: 'user', content: [{ type: 'image', url: 'data:image/png;base64,AAAA' }] },
  { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"x"}' }, { id: 'call_2', name: 'ask', arguments: '' }] },
  { role: 'tool', content: '{"ok":true}', toolCallId: 'call_1', name: 'lookup', isError: true },
  { role: 'tool', content: [{ type: 'text', text: 'answer: b' }], toolCallId: 'call_2', name: 'ask' },
  { role: 'assistant', content: [{ type: 'text', text: 'null' }] },
  { role: 'assistant', content: 'ünïcödé ✓ "quoted" \\ back' },
];

const KINDS = ['message', 'notice', 'degraded', 'synthetic_tool_result', 'compact_note'] as const;

/** Steps the store must refuse as malformed (`input.invalid`) before writing anything. */
const MALFORMED: Array<[string, Omit<StepCommit, 'sessionId' | 'leaseToken'>]> = [
  ['a tool message without toolCallId', { messages: [{ inputSeq: 1, round: 0, message: { role: 'tool', content: 'x', name: 't' } as unknown as Message }] }],
  ['a message with an unknown role', { messages: [{ inputSeq: 1, round: 0, message: { role: 'robot', content: 'x' } as unknown as Message }] }],
  ['a message of an unknown kind', { messages: [{ inputSeq: 1, round: 0, kind: 'memo' as 'notice', message: user('x') }] }],
  ['a content part of an unknown type', { messages: [{ inputSeq: 1, round: 0, message: { role: 'user', content: [{ type: 'audio' }] } as unknown as Message }] }],
  ['a NUL character in a message', { messages: [{ inputSeq: 1, round: 0, message: user('a\u0000b') }] }],
  ['an unpaired surrogate in a message', { messages: [{ inputSeq: 1, round: 0, message: user('a\udbffb') }] }],
  ['a negative round', { messages: [{ inputSeq: 1, round: -1, message: user('x') }] }],
  ['a fractional input seq', { messages: [{ inputSeq: 1.5, round: 0, message: user('x') }] }],
  ['the same tool call id twice', { toolCalls: [toolCall('c', 'started'), toolCall('c', 'completed')] }],
  ['an unknown ledger status', { toolCalls: [toolCall('c', 'exploded' as 'started')] }],
  ['tool arguments JSON cannot hold', { toolCalls: [toolCall('c', 'started', { args: { n: 1n } })] }],
  ['the same usage round twice', { usageRounds: [usageRound(1, 0, 1), usageRound(1, 0, 2)] }],
  ['a pending state naming an unknown call', { pending: { ...PENDING, unresolvedIds: ['call_9'] } }],
  ['a compaction without a note', { compaction: { foldSeqs: [1], record: { fromSeq: 1, toSeq: 1, estimatedTokensBefore: 1, estimatedTokensAfter: 1, model: null } } }],
  ['an input steered into itself', { steer: { seqs: [1], intoInputSeq: 1 } }],
  ['a non-terminal input status', { input: { seq: 1, status: 'running' as 'done' } }],
  ['a result with an unknown outcome', { input: { seq: 1, status: 'done', result: { status: 'exploded' } as never } }],
];

export function messageScenarios(ctx: ContractContext): void {
  describe('commitStep: messages and pending state', () => {
    it('gives messages gapless seqs across steps, in order, and round-trips every shape exactly', async () => {
      const { id, token } = await running(ctx, 'shapes');
      const first = await ctx.store.commitStep({
        sessionId: id,
        leaseToken: token,
        messages: SHAPES.slice(0, 4).map((message) => ({ inputSeq: 1, round: 0, message })),
      });
      const second = await ctx.store.commitStep({
        sessionId: id,
        leaseToken: token,
        messages: SHAPES.slice(4).map((message, i) => ({ inputSeq: i === 0 ? null : 1, round: i === 0 ? null : 1, kind: KINDS[i], message })),
      });
      expect(first.messageSeqs).toEqual([1, 2, 3, 4]);
      expect(second.messageSeqs).toEqual([5, 6, 7, 8, 9]);

      const window = await ctx.store.loadWindow(id);
      expect(window.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(window.map((m) => m.message)).toEqual(SHAPES);
      expect(window.map((m) => [m.inputSeq, m.round, m.kind, m.state])).toEqual([
        ...[1, 2, 3, 4].map(() => [1, 0, 'message', 'active']),
        [null, null, 'message', 'active'],
        ...KINDS.slice(1).map((kind) => [1, 1, kind, 'active']),
      ]);
      expect(window.every((m) => m.createdAt instanceof Date)).toBe(true);
      expect(await ctx.store.loadHistory(id)).toEqual(window);
      expect(await ctx.store.loadHistory(id, { includeCompacted: true })).toEqual(window);
      expect((await ctx.store.getSession(id))?.nextMessageSeq).toBe(9);
    });

    it('reads a tool message written with isError false back as not an error', async () => {
      const { id, token } = await leased(ctx, 'iserror');
      await ctx.store.commitStep({
        sessionId: id,
        leaseToken: token,
        messages: [{ inputSeq: null, round: null, message: { role: 'tool', content: 'ok', toolCallId: 'c1', name: 't', isError: false } }],
      });
      const [row] = await ctx.store.loadWindow(id);
      expect(row?.message).toMatchObject({ role: 'tool', content: 'ok', toolCallId: 'c1', name: 't' });
      expect((row?.message as { isError?: boolean }).isError ?? false).toBe(false);
    });

    it('numbers the messages of concurrent steps of one holder gaplessly, each step contiguous', async () => {
      const { id, token } = await leased(ctx, 'concurrent');
      const steps = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          ctx.store.commitStep({
            sessionId: id,
            leaseToken: token,
            messages: [user(`q${i}`), assistant(`a${i}`)].map((message) => ({ inputSeq: null, round: null, message })),
          }),
        ),
      );
      const seqs = steps.flatMap((step) => step.messageSeqs).sort((a, b) => a - b);
      expect(seqs).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
      for (const step of steps) expect(step.messageSeqs[1]).toBe((step.messageSeqs[0] ?? 0) + 1);
      const window = await ctx.store.loadWindow(id);
      steps.forEach((step, i) => {
        expect(window[(step.messageSeqs[0] ?? 0) - 1]?.message.content).toBe(`q${i}`);
        expect(window[(step.messageSeqs[1] ?? 0) - 1]?.message.content).toBe(`a${i}`);
      });
    });

    it('commits an empty step: no seqs, nothing appended', async () => {
      const { id, token } = await leased(ctx, 'empty');
      expect(await ctx.store.commitStep({ sessionId: id, leaseToken: token })).toEqual({ messageSeqs: [], pendingInputs: false, pendingSteers: false });
      expect(await ctx.store.commitStep({ sessionId: id, leaseToken: token, messages: [] })).toEqual({ messageSeqs: [], pendingInputs: false, pendingSteers: false });
      expect(await ctx.store.getSession(id)).toMatchObject({ nextMessageSeq: 0, pending: null });
      expect(await ctx.store.loadWindow(id)).toEqual([]);
    });

    it('sets the pending state, keeps it when a step leaves it out, and clears it with null', async () => {
      const { id, token } = await running(ctx, 'pending');
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, pending: PENDING });
      expect((await ctx.store.getSession(id))?.pending).toEqual(PENDING);
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, messages: [{ inputSeq: 1, round: 0, message: user('x') }] });
      expect((await ctx.store.getSession(id))?.pending).toEqual(PENDING);
      const narrowed = { ...PENDING, unresolvedIds: ['call_2'] };
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, pending: narrowed });
      expect((await ctx.store.getSession(id))?.pending).toEqual(narrowed);
      await ctx.store.commitStep({ sessionId: id, leaseToken: token, pending: null });
      expect((await ctx.store.getSession(id))?.pending).toBeNull();
    });

    it.each(MALFORMED)('refuses a step with %s as input.invalid and writes nothing', async (_label, parts) => {
      const { id, token } = await running(ctx, 'malformed');
      const before = await snapshot(ctx.store, id);
      await expectCode(
        ctx.store.commitStep({ sessionId: id, leaseToken: token, messages: [{ inputSeq: 1, round: 0, message: user('fine') }], ...parts }),
        'input.invalid',
      );
      expect(await snapshot(ctx.store, id)).toEqual(before);
    });
  });
}
