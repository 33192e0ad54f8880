import { z } from 'zod';
import { InputInvalidError } from './errors/index.js';
import { messageContentSchema, type MessageContent } from './messages.js';
import type { InputOverrides } from './agent-profile.js';
import { responseFormatSchema } from './response-format-schema.js';
import { RUN_OUTCOMES } from './session-types.js';

/**
 * The payloads of the three input kinds, as stored in `session_inputs.payload`. Validated when an
 * input is accepted (bad input never reaches the inbox) and again when a run loads it (persisted
 * state is untrusted).
 */
export const inputOverridesSchema = z
  .object({
    tools: z.array(z.string().min(1).max(64)).max(256).optional(),
    systemPrompt: z.string().max(200_000).optional(),
    model: z.string().min(1).max(200).optional(),
    maxRounds: z.number().int().min(1).max(1000).optional(),
    responseFormat: responseFormatSchema.optional(),
    maxTokensPerInput: z.number().int().positive().optional(),
  })
  .strict();

/** `send`: a user message. `input` is text, content parts, or a user message object. */
export const sendPayloadSchema = z
  .object({
    input: z.union([
      messageContentSchema,
      z.object({ role: z.literal('user'), content: messageContentSchema, name: z.string().max(64).optional() }).strict(),
    ]),
    options: inputOverridesSchema.optional(),
  })
  .strict();

/** Longest `submit.interactionId` of a `resume` (it is never empty). */
export const MAX_INTERACTION_ID_LENGTH = 200;

/** Longest `abortPending.reason` of a `resume`. */
export const MAX_ABORT_REASON_LENGTH = 500;

/**
 * `resume`: continue a session without new user text — finish open tool calls and run another
 * round; or answer a `request_user_input` question (`submit`); or close every open tool call with an
 * `<aborted: reason>` result and stop (`abortPending`).
 */
export const resumePayloadSchema = z
  .object({
    submit: z.object({ interactionId: z.string().min(1).max(MAX_INTERACTION_ID_LENGTH), value: z.unknown() }).strict().optional(),
    abortPending: z.object({ reason: z.string().max(MAX_ABORT_REASON_LENGTH) }).strict().optional(),
    options: inputOverridesSchema.optional(),
  })
  .strict()
  .refine((payload) => payload.submit === undefined || payload.abortPending === undefined, {
    message: 'submit and abortPending cannot be combined',
  });

/** `timer`: a wake-up delivered by a timer firing. */
export const timerPayloadSchema = z
  .object({
    timerId: z.string().min(1).max(200),
    note: z.string().max(10_000),
    fireCount: z.number().int().positive(),
  })
  .strict();

const count = z.number().int().nonnegative();

/**
 * Cost fields of a usage. A child's result delivered before costs existed has none: 0, and
 * `costUsd` follows from the exact picodollars.
 */
const costFields = {
  costUsd: z.number().nonnegative().default(0),
  costPicoUsd: count.default(0),
  unpricedCalls: count.optional(),
};

const ownUsageSchema = z.object(
  Object.assign(
    { promptTokens: count, completionTokens: count, cachedTokens: count, cacheWriteTokens: count, reasoningTokens: count, totalTokens: count, llmCalls: count },
    costFields,
  ),
);

/** Token usage as a child's result carries it (its own `children` included, one level of nesting kept). */
const usageSchema = ownUsageSchema.extend({ children: ownUsageSchema.optional() });

/**
 * `child`: a child session's outcome, delivered by the fleet to its parent (never by a producer:
 * `add` refuses the kind). See `ChildResultPayload` in `ports/children.ts`.
 */
export const childPayloadSchema = z
  .object({
    toolCallId: z.string().min(1).max(500),
    childSessionId: z.string().min(1).max(128),
    agent: z.string().min(1).max(64),
    status: z.enum(RUN_OUTCOMES),
    text: z.string(),
    errorCode: z.string().nullable(),
    usage: usageSchema,
    wait: z.boolean(),
  })
  .strict();

export type SendPayload = z.infer<typeof sendPayloadSchema>;
export type ChildPayload = z.infer<typeof childPayloadSchema>;
export type ResumePayload = z.infer<typeof resumePayloadSchema>;
export type TimerPayload = z.infer<typeof timerPayloadSchema>;

export type ParsedInput =
  | { kind: 'send'; payload: SendPayload }
  | { kind: 'resume'; payload: ResumePayload }
  | { kind: 'timer'; payload: TimerPayload }
  | { kind: 'child'; payload: ChildPayload };

const PAYLOAD_SCHEMAS: Readonly<Record<string, z.ZodType | undefined>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, z.ZodType>, { send: sendPayloadSchema, resume: resumePayloadSchema, timer: timerPayloadSchema, child: childPayloadSchema }),
);

/** Validates a payload for its kind; throws `input.invalid` naming the first problem. */
export function parseInputPayload(kind: string, payload: unknown): ParsedInput {
  const schema = PAYLOAD_SCHEMAS[kind];
  if (schema === undefined) throw new InputInvalidError(`unknown input kind "${kind}" (expected send, resume or timer)`);
  const parsed = schema.safeParse(payload);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? 'payload' : issue.path.join('.');
    throw new InputInvalidError(`invalid ${kind} input: ${where}: ${issue?.message ?? 'invalid'}`, {
      details: { issues: parsed.error.issues.slice(0, 10).map((entry) => ({ path: entry.path.join('.'), message: entry.message })) },
    });
  }
  return { kind, payload: parsed.data } as ParsedInput;
}

/**
 * The user message a timer firing or a child's result becomes: wrapped, so the model can tell what
 * it is and that no person wrote it.
 */
export function notificationText(parsed: Extract<ParsedInput, { kind: 'timer' | 'child' }>): string {
  if (parsed.kind === 'timer') return `<timer id="${parsed.payload.timerId}" firing="${parsed.payload.fireCount}">\n${parsed.payload.note}\n</timer>`;
  const { childSessionId, agent, status, text } = parsed.payload;
  return `<subagent_result child="${childSessionId}" agent="${agent}" status="${status}">\n${text}\n</subagent_result>`;
}

/** The user-message content of a send payload. */
export function sendContent(payload: SendPayload): { content: MessageContent; name?: string } {
  const input = payload.input;
  if (typeof input === 'string' || Array.isArray(input)) return { content: input };
  return input.name === undefined ? { content: input.content } : { content: input.content, name: input.name };
}

export function overridesOf(parsed: ParsedInput): InputOverrides {
  return parsed.kind === 'timer' || parsed.kind === 'child' ? {} : (parsed.payload.options ?? {});
}
