import { z } from 'zod';
import { MESSAGE_KINDS, messageSchema } from '../../core/messages.js';
import { pendingStateSchema } from '../../core/pending-state.js';
import { TERMINAL_INPUT_STATUSES, TOOL_CALL_STATUSES } from '../../core/session-types.js';
import { INT4_MAX, TOOL_CALL_ID_MAX } from './commit-step-limits.js';
import { inputResultSchema } from '../rows/input-row.js';

const seq = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const int4 = z.number().int().nonnegative().max(INT4_MAX);

const stepMessageSchema = z.object({
  inputSeq: seq.nullable(),
  round: int4.nullable(),
  kind: z.enum(MESSAGE_KINDS).default('message'),
  message: messageSchema,
});

const toolCallWriteSchema = z.object({
  toolCallId: z.string().min(1).max(TOOL_CALL_ID_MAX),
  inputSeq: seq,
  round: int4,
  name: z.string().min(1),
  args: z.unknown(),
  status: z.enum(TOOL_CALL_STATUSES),
  errorCode: z.string().nullable().optional(),
  durationMs: int4.nullable().optional(),
});

const usageRoundWriteSchema = z.object({
  inputSeq: seq,
  round: int4,
  provider: z.string().min(1),
  model: z.string().min(1),
  llmCalls: int4,
  promptTokens: int4,
  completionTokens: int4,
  cachedTokens: int4,
  cacheWriteTokens: int4,
  reasoningTokens: int4,
  totalTokens: int4,
  // Picodollars: a bigint column, exact in a double up to 2^53 (about $9,000 for one call).
  costPicoUsd: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).nullable().default(null),
});

const compactionSchema = z.object({
  foldSeqs: z.array(seq).min(1),
  record: z.object({
    noteSeq: seq.optional(),
    inputSeq: seq.nullable().optional(),
    fromSeq: seq,
    toSeq: seq,
    estimatedTokensBefore: int4,
    estimatedTokensAfter: int4,
    model: z.string().nullable(),
  }),
});

const steerSchema = z.object({ seqs: z.array(seq).min(1), intoInputSeq: seq });

const inputTransitionSchema = z.object({
  seq,
  status: z.enum(TERMINAL_INPUT_STATUSES),
  result: inputResultSchema.optional(),
  errorCode: z.string().min(1).optional(),
  errorMessage: z.string().optional(),
});

/**
 * What a step must be. The common steps are checked without parsing by `checkedStep`
 * (`commit-step-fast-check.ts`), which must agree with this schema: change both together.
 */
export const stepSchema = z
  .object({
    messages: z.array(stepMessageSchema).default([]),
    pending: pendingStateSchema.nullable().optional(),
    toolCalls: z.array(toolCallWriteSchema).default([]),
    usageRounds: z.array(usageRoundWriteSchema).default([]),
    compaction: compactionSchema.optional(),
    steer: steerSchema.optional(),
    input: inputTransitionSchema.optional(),
  })
  .superRefine((step, ctx) => {
    // One multi-row upsert cannot touch the same row twice; such a step is a caller bug.
    unique(step.toolCalls.map((call) => call.toolCallId), ['toolCalls'], 'tool call id', ctx);
    unique(step.usageRounds.map((row) => `${row.inputSeq}/${row.round}`), ['usageRounds'], 'usage round', ctx);
    if (step.steer !== undefined) {
      unique(step.steer.seqs.map(String), ['steer', 'seqs'], 'steer seq', ctx);
      if (step.steer.seqs.includes(step.steer.intoInputSeq)) {
        ctx.addIssue({ code: 'custom', path: ['steer', 'seqs'], message: 'an input cannot be steered into itself' });
      }
    }
    if (step.compaction !== undefined) {
      unique(step.compaction.foldSeqs.map(String), ['compaction', 'foldSeqs'], 'fold seq', ctx);
      const hasNote = step.messages.some((message) => message.kind === 'compact_note');
      if (step.compaction.record.noteSeq === undefined && !hasNote) {
        ctx.addIssue({
          code: 'custom',
          path: ['compaction', 'record', 'noteSeq'],
          message: 'required when the step appends no compact_note message',
        });
      }
    }
  });

/** A step after validation: defaults applied, every part well-formed. */
export type ValidatedStep = z.infer<typeof stepSchema>;

function unique(keys: string[], path: (string | number)[], what: string, ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  for (const key of keys) {
    if (seen.has(key)) ctx.addIssue({ code: 'custom', path, message: `${what} ${key} appears twice` });
    seen.add(key);
  }
}
