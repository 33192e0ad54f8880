import { z } from 'zod';
import { ConfigInvalidError } from './errors/index.js';
import { responseFormatSchema } from './response-format-schema.js';
import type { ResponseFormatSpec } from './ports/llm.js';

/**
 * How an agent runs: resolved once (defaults filled), then per-input overrides are applied to a copy
 * — shared configuration is never mutated.
 */
export interface AgentProfile {
  /** Default system prompt; a session's own prompt and a per-input prompt take precedence. */
  systemPrompt: string | null;
  /** Model override passed to the LLM port; `null` = the adapter's default. */
  model: string | null;
  /** Rounds per input before the wrap-up call (`hit_round_limit`). Default 20. */
  maxRounds: number;
  /** Output cap per LLM call, in tokens. Default 4096. */
  maxOutputTokens: number;
  temperature: number | null;
  /** Per-input token budget (prompt + completion over the input's calls); `null` = unlimited. */
  maxTokensPerInput: number | null;
  /** The context window budget compaction aims under, in estimated tokens. Default 100000. */
  contextBudgetTokens: number;
  /** Compaction triggers at `contextBudgetTokens × compactTriggerRatio`. Default 0.75. */
  compactTriggerRatio: number;
  /** The most recent inputs never folded by compaction. Default 4. */
  compactKeepLastInputs: number;
  /** Model for the compaction summary call; `null` = the agent's model. */
  compactModel: string | null;
  /** Empty replies retried before completing with empty text. Default 3. */
  emptyResponseRetries: number;
  /** Consecutive truncated replies answered with a notice before accepting them. Default 2. */
  truncationNotices: number;
  /** Structured output for every input of this agent; `null` = free text. */
  responseFormat: ResponseFormatSpec | null;
  /** Concurrency-safe tool calls of one round run at most this many at once. Default 4. */
  toolConcurrency: number;
  /** Tool results longer than this are truncated with a notice. Default 50000. */
  maxToolResultChars: number;
  /** The agents `spawn_agent` may start (docs/child-sessions.md); empty: the tool is not offered. */
  subagents: readonly string[];
  /** The deepest child a session of this agent may start: a root is depth 0. Default 3. */
  maxSpawnDepth: number;
  /** Child sessions one input may start. Default 8. */
  maxChildrenPerInput: number;
}

export const DEFAULT_AGENT_PROFILE: AgentProfile = Object.freeze({
  systemPrompt: null,
  model: null,
  maxRounds: 20,
  maxOutputTokens: 4096,
  temperature: null,
  maxTokensPerInput: null,
  contextBudgetTokens: 100_000,
  compactTriggerRatio: 0.75,
  compactKeepLastInputs: 4,
  compactModel: null,
  emptyResponseRetries: 3,
  truncationNotices: 2,
  responseFormat: null,
  toolConcurrency: 4,
  maxToolResultChars: 50_000,
  subagents: Object.freeze([]),
  maxSpawnDepth: 3,
  maxChildrenPerInput: 8,
});

/** Per-input overrides carried in the input's payload (`options`). */
export interface InputOverrides {
  /** The model only sees these tools. */
  tools?: string[];
  systemPrompt?: string;
  /** The model for this input's calls, instead of the agent's (same provider; its fallbacks keep their own). */
  model?: string;
  maxRounds?: number;
  responseFormat?: ResponseFormatSpec;
  maxTokensPerInput?: number;
}

export function resolveAgentProfile(partial: Partial<AgentProfile> = {}): AgentProfile {
  return { ...DEFAULT_AGENT_PROFILE, ...partial };
}

const agentProfileSchema = z
  .object({
    systemPrompt: z.string().nullable(),
    model: z.string().min(1).nullable(),
    maxRounds: z.number().int().min(1).max(1000),
    maxOutputTokens: z.number().int().positive(),
    temperature: z.number().min(0).max(2).nullable(),
    maxTokensPerInput: z.number().int().positive().nullable(),
    contextBudgetTokens: z.number().int().positive(),
    compactTriggerRatio: z.number().gt(0).max(1),
    compactKeepLastInputs: z.number().int().nonnegative(),
    compactModel: z.string().min(1).nullable(),
    emptyResponseRetries: z.number().int().nonnegative().max(100),
    truncationNotices: z.number().int().nonnegative().max(100),
    responseFormat: responseFormatSchema.nullable(),
    toolConcurrency: z.number().int().min(1).max(1024),
    // Room for some of the result besides the truncation notice (50 characters).
    maxToolResultChars: z.number().int().min(100),
    subagents: z.array(z.string().min(1).max(64)).max(64),
    maxSpawnDepth: z.number().int().min(1).max(16),
    maxChildrenPerInput: z.number().int().min(1).max(64),
  })
  .strict();

/**
 * {@link resolveAgentProfile} for a profile from outside (`startWorker({ profile })`): every field
 * is checked, and an unknown one (a typo) refused, with `config.invalid` naming each problem — at
 * start-up, not at the first input that reaches the bad value.
 */
export function checkedAgentProfile(partial: unknown = {}): AgentProfile {
  if (typeof partial !== 'object' || partial === null || Array.isArray(partial)) {
    throw new ConfigInvalidError('the agent profile must be an object', { details: { problems: ['not an object'] } });
  }
  const parsed = agentProfileSchema.safeParse(Object.assign({}, DEFAULT_AGENT_PROFILE, partial));
  if (parsed.success) return resolveAgentProfile(partial as Partial<AgentProfile>);
  const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(profile)'}: ${issue.message}`);
  throw new ConfigInvalidError(`invalid agent profile: ${problems.join('; ')}`, { details: { problems } });
}
