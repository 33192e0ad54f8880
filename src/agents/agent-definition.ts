import { z } from 'zod';
import { LLM_PROVIDERS, type LlmProviderName } from '../config/resolved-config.js';
import { ConfigInvalidError } from '../core/errors/index.js';
import { AGENT_NAME_RULE } from '../fleet/agent-name.js';
import type { ResponseFormatSpec } from '../core/ports/llm.js';
import { responseFormatSchema } from '../core/response-format-schema.js';
import { mcpServerEntrySchema, type McpServerEntry } from './mcp-entry.js';

/**
 * One agent a fleet serves (docs/agents.md): which model runs it, with what prompt, tools and limits.
 * Plain data, so a definition can live in a `.json` file and its version is a hash of it. Every field
 * but `name` is optional; what is left out takes the fleet's default.
 */
export interface AgentDefinition {
  /** 1–64 characters of `[A-Za-z0-9_.-]`; unique in the file. Sessions choose an agent by it. */
  name: string;
  /** Default: `LLM_PROVIDER` (itself inferred from the keys set, else `scripted`). */
  provider?: LlmProviderName;
  /** Default: `LLM_MODEL` when the provider is `LLM_PROVIDER`'s, else the provider's default model. */
  model?: string;
  /** `provider:model` pairs tried in order when the primary is unavailable. Default: none. */
  fallback?: string[];
  /** The environment variable holding the API key. Default `OPENAI_API_KEY` or `ANTHROPIC_API_KEY`. */
  apiKeyEnv?: string;
  /** The environment variable holding the base URL. Default `OPENAI_BASE_URL` or `ANTHROPIC_BASE_URL`. */
  baseUrlEnv?: string;
  /** The system prompt; a session's own prompt and a per-input prompt take precedence. Default: none. */
  systemPrompt?: string;
  /**
   * The tools the model may call, exactly these: names of built-in tools and of `LOOPFLEET_TOOLS`
   * tools, and MCP servers (`{ mcp: { … } }`, every tool of the server). Default: the built-ins only.
   */
  tools?: (string | McpServerEntry)[];
  /** Rounds per input before the wrap-up call. 1–1000, default 20. */
  maxRounds?: number;
  /** Output cap per LLM call, in tokens. Default 4096. */
  maxOutputTokens?: number;
  /** Sampling temperature, 0–2. Default: the provider's. */
  temperature?: number;
  /** The context budget compaction aims under, in estimated tokens. Default 100000. */
  contextBudgetTokens?: number;
  /** When and how old messages are folded into a note (docs/agent-loop.md, "Compaction"). */
  compaction?: {
    /** Compaction starts at `contextBudgetTokens × triggerRatio`. Above 0, at most 1; default 0.75. */
    triggerRatio?: number;
    /** The most recent inputs never folded. Default 4. */
    keepLastInputs?: number;
    /** The model that writes the summary. Default: the agent's model. */
    model?: string;
  };
  /** Structured output for every input of the agent. Default: free text. */
  responseFormat?: ResponseFormatSpec;
  /** Tokens (prompt + completion) one input may use over all its calls. Default: unlimited. */
  maxTokensPerInput?: number;
  /** How a failed LLM call is retried (docs/llm-providers.md, "Retries"). */
  retry?: {
    /** Attempts in all, the first included. 1–20, default 3. */
    maxAttempts?: number;
    /** Backoff before the first retry, ms; doubled for each further one. Default 500. */
    initialDelayMs?: number;
    /** Largest backoff, ms. Default 8000. */
    maxDelayMs?: number;
    /** No retry starts later than this after the first attempt, ms; `null`: no deadline. Default 60000. */
    totalTimeoutMs?: number | null;
    /** Random spread of each backoff, 0–1. Default 0.2. */
    jitter?: number;
  };
  /** Concurrency-safe tool calls of one round run at most this many at once. Default 4. */
  toolConcurrency?: number;
  /** Tool results longer than this many characters are cut with a notice. Default 50000. */
  maxToolResultChars?: number;
  /** Empty replies retried before the input completes with empty text. Default 3. */
  emptyResponseRetries?: number;
  /** Consecutive truncated replies answered with a notice before one is accepted. Default 2. */
  truncationNotices?: number;
  /**
   * The agents this one may start as child sessions with the `spawn_agent` tool (docs/child-sessions.md),
   * by name; each must be defined in the same file. Default: none (no `spawn_agent`).
   */
  subagents?: string[];
  /** How deep a tree of child sessions may grow below a session of this agent: 1–16, default 3. */
  maxSpawnDepth?: number;
  /** Child sessions one input may start: 1–64, default 8. */
  maxChildrenPerInput?: number;
  /** Yours: kept with the definition, listed by `loopfleet agents`, part of the version. */
  metadata?: Record<string, unknown>;
}


const ENV_NAME = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');
const FALLBACK_PAIR = new RegExp(`^(${LLM_PROVIDERS.join('|')}):.+$`);
const TOOL_NAME = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a tool name (1-64 characters of A-Z a-z 0-9 _ -)');

/** No tool listed twice, no two MCP servers of one name (their tools would share the `<server>__` prefix). */
function uniqueTools(tools: readonly (string | McpServerEntry)[], ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  tools.forEach((tool, index) => {
    const key = typeof tool === 'string' ? `tool ${tool}` : `MCP server ${tool.mcp.name}`;
    if (seen.has(key)) ctx.addIssue({ code: 'custom', path: [index], message: `${key} is listed twice` });
    seen.add(key);
  });
}

/** The definition's schema: strict, so a misspelt field is refused instead of ignored. */
export const agentDefinitionSchema = z
  .object({
    name: z.string().regex(AGENT_NAME_RULE, 'must be 1-64 characters of A-Z a-z 0-9 _ . -'),
    provider: z.enum(LLM_PROVIDERS).optional(),
    model: z.string().min(1).max(200).optional(),
    fallback: z.array(z.string().regex(FALLBACK_PAIR, `must be provider:model with provider one of ${LLM_PROVIDERS.join(', ')}`)).max(8).optional(),
    apiKeyEnv: ENV_NAME.optional(),
    baseUrlEnv: ENV_NAME.optional(),
    systemPrompt: z.string().max(200_000).optional(),
    tools: z.array(z.union([TOOL_NAME, mcpServerEntrySchema])).max(256).superRefine(uniqueTools).optional(),
    maxRounds: z.number().int().min(1).max(1000).optional(),
    maxOutputTokens: z.number().int().positive().max(1_000_000).optional(),
    temperature: z.number().min(0).max(2).optional(),
    contextBudgetTokens: z.number().int().positive().optional(),
    compaction: z
      .object({
        triggerRatio: z.number().gt(0).max(1).optional(),
        keepLastInputs: z.number().int().nonnegative().max(10_000).optional(),
        model: z.string().min(1).max(200).optional(),
      })
      .strict()
      .optional(),
    responseFormat: responseFormatSchema.optional(),
    maxTokensPerInput: z.number().int().positive().optional(),
    retry: z
      .object({
        maxAttempts: z.number().int().min(1).max(20).optional(),
        initialDelayMs: z.number().int().nonnegative().max(600_000).optional(),
        maxDelayMs: z.number().int().nonnegative().max(600_000).optional(),
        totalTimeoutMs: z.number().int().positive().nullable().optional(),
        jitter: z.number().min(0).max(1).optional(),
      })
      .strict()
      .refine((retry) => retry.initialDelayMs === undefined || retry.maxDelayMs === undefined || retry.maxDelayMs >= retry.initialDelayMs, {
        message: 'maxDelayMs must be at least initialDelayMs',
      })
      .optional(),
    toolConcurrency: z.number().int().min(1).max(1024).optional(),
    maxToolResultChars: z.number().int().min(100).optional(),
    emptyResponseRetries: z.number().int().nonnegative().max(100).optional(),
    truncationNotices: z.number().int().nonnegative().max(100).optional(),
    subagents: z.array(z.string().regex(AGENT_NAME_RULE, 'must be an agent name')).max(64).refine((names) => new Set(names).size === names.length, 'names an agent twice').optional(),
    maxSpawnDepth: z.number().int().min(1).max(16).optional(),
    maxChildrenPerInput: z.number().int().min(1).max(64).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

/**
 * Checks one agent definition and returns it (frozen), for the default export of a `LOOPFLEET_AGENTS`
 * module: `export default [defineAgent({ name: 'support', model: 'gpt-4o' })]`. A bad field throws
 * `config.invalid` naming the agent and the field, as the worker's start-up check does.
 */
export function defineAgent<const T extends AgentDefinition>(definition: T): T {
  checkAgentDefinition(definition, 0);
  return Object.freeze(definition);
}

/**
 * Validates a whole `LOOPFLEET_AGENTS` array: at least one agent, unique names, every field valid.
 * `source` names where it came from in the message (`LOOPFLEET_AGENTS (./agents.json)`).
 */
export function checkAgentDefinitions(value: unknown, source: string): AgentDefinition[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw new ConfigInvalidError(`${source}: must be a non-empty array of agent definitions`, { details: { problems: ['not a non-empty array'] } });
  }
  const seen = new Map<string, number>();
  const definitions = value.map((entry: unknown, index) => {
    const definition = withSource(source, () => checkAgentDefinition(entry, index));
    const earlier = seen.get(definition.name);
    if (earlier !== undefined) throw new ConfigInvalidError(`${source}: agents #${earlier} and #${index} are both named "${definition.name}"`);
    seen.set(definition.name, index);
    return definition;
  });
  checkSubagents(definitions, source);
  return definitions;
}

/** Every `subagents` name is an agent of the same file: a child on an agent no worker serves would only fail. */
function checkSubagents(definitions: readonly AgentDefinition[], source: string): void {
  const names = new Set(definitions.map((definition) => definition.name));
  for (const definition of definitions) {
    const unknown = (definition.subagents ?? []).filter((name) => !names.has(name));
    if (unknown.length > 0) {
      throw new ConfigInvalidError(`${source}: agent "${definition.name}": subagents: ${unknown.map((name) => `"${name}"`).join(', ')} not defined in this file`, {
        details: { agent: `agent "${definition.name}"`, problems: [`subagents: unknown agent(s) ${unknown.join(', ')}`] },
      });
    }
  }
}

function checkAgentDefinition(entry: unknown, index: number): AgentDefinition {
  const label = agentLabel(entry, index);
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    throw new ConfigInvalidError(`${label}: must be an object`, { details: { agent: label, problems: ['not an object'] } });
  }
  const parsed = agentDefinitionSchema.safeParse(entry);
  if (parsed.success) return parsed.data as AgentDefinition;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(agent)'}: ${issue.message}`);
  throw new ConfigInvalidError(`${label}: ${problems.join('; ')}`, { details: { agent: label, problems } });
}

/** `agent "support"`, or `agent #2` when it has no usable name. */
function agentLabel(entry: unknown, index: number): string {
  const name = typeof entry === 'object' && entry !== null ? (entry as { name?: unknown }).name : undefined;
  return typeof name === 'string' && AGENT_NAME_RULE.test(name) ? `agent "${name}"` : `agent #${index}`;
}

function withSource<T>(source: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof ConfigInvalidError) throw new ConfigInvalidError(`${source}: ${error.message}`, { details: error.details });
    throw error;
  }
}
