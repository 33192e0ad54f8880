/**
 * The pending tool-call state of a session (docs/agent-loop.md): set when the assistant asks for tools,
 * narrowed as each tool result is appended, cleared when all are answered. It is what lets a worker
 * that takes over a session after a crash know which calls are still open and which questions are
 * waiting for a human (`request_user_input`).
 *
 * It is persisted as JSON on the session row, so it is untrusted on load: the store
 * validates it with {@link pendingStateSchema} and refuses what does not match.
 */
import { z } from 'zod';
import { toolCallSchema, type ToolCall } from './messages.js';

/** A question put to a human by a tool call; answered later with `submitInput`. */
export interface PendingInteraction {
  /** Stable id the host answers by. */
  interactionId: string;
  /** The tool call that asked; its tool result is the answer. */
  toolCallId: string;
  toolName: string;
  /** What the human is asked. */
  prompt: string;
  /** Allowed answers, or null for free text. */
  options: string[] | null;
  /** Tool-defined extra data, passed through to the host untouched. */
  metadata: Record<string, unknown>;
}

/** The open tool calls of the last assistant message that asked for tools. */
export interface PendingState {
  /** Message seq of the assistant message that asked for the tools. */
  assistantSeq: number;
  /** Round (0-based within its input) in which the tools were asked for. */
  round: number;
  /** Seq of the input whose run asked for the tools. */
  inputSeq: number;
  /** Every tool call of that assistant message, answered or not. */
  toolCalls: ToolCall[];
  /** Ids of the calls that have no tool result yet; never empty (an empty set clears the state). */
  unresolvedIds: string[];
  /** Questions waiting for a human, each tied to one unresolved call. */
  interactions: PendingInteraction[];
  /**
   * The tools the input that asked for the calls allowed (its `options.tools`), which they run with
   * even when a later input (a `resume`) runs them; null when it allowed every tool. Absent in a state
   * written before it was recorded: the running input's tools apply then.
   */
  allowedTools?: string[] | null;
}

const nonNegativeInt = z.number().int().nonnegative();

/** Validates a persisted {@link PendingInteraction}. */
export const pendingInteractionSchema: z.ZodType<PendingInteraction> = z.object({
  interactionId: z.string().min(1),
  toolCallId: z.string().min(1),
  toolName: z.string().min(1),
  prompt: z.string(),
  options: z.array(z.string()).nullable(),
  metadata: z.record(z.string(), z.unknown()),
});

/**
 * Validates a persisted pending state. Beyond the shapes it checks the cross-references a resumed run
 * relies on: every unresolved id and every interaction points at one of the state's tool calls.
 */
export const pendingStateSchema: z.ZodType<PendingState> = z
  .object({
    assistantSeq: nonNegativeInt,
    round: nonNegativeInt,
    inputSeq: nonNegativeInt,
    toolCalls: z.array(toolCallSchema).min(1),
    unresolvedIds: z.array(z.string().min(1)).min(1),
    interactions: z.array(pendingInteractionSchema),
    allowedTools: z.array(z.string().min(1)).nullable().optional(),
  })
  .superRefine((state, ctx) => {
    const ids = new Set(state.toolCalls.map((call) => call.id));
    state.unresolvedIds.forEach((id, index) => {
      if (!ids.has(id)) {
        ctx.addIssue({ code: 'custom', path: ['unresolvedIds', index], message: `no tool call with id ${id}` });
      }
    });
    state.interactions.forEach((interaction, index) => {
      if (!ids.has(interaction.toolCallId)) {
        ctx.addIssue({
          code: 'custom',
          path: ['interactions', index, 'toolCallId'],
          message: `no tool call with id ${interaction.toolCallId}`,
        });
      }
    });
  });
