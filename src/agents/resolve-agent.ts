import { DEFAULT_MODEL, type LlmConfig, type LlmProviderName, type ResolvedConfig } from '../config/index.js';
import { url } from '../config/env-variable.js';
import { checkedAgentProfile, type AgentProfile } from '../core/agent-profile.js';
import { ConfigInvalidError } from '../core/errors/index.js';
import { resolveRetryPolicy, type RetryPolicy } from '../core/retry/index.js';
import type { AgentRef } from '../core/session-types.js';
import { DEFAULT_SESSION_AGENT } from '../fleet/agent-name.js';
import type { AgentDefinition } from './agent-definition.js';
import { agentVersion } from './agent-version.js';
import type { McpServerEntry } from './mcp-entry.js';

/** An agent with every default filled in and its credentials read: what a worker builds it from. */
export interface ResolvedAgent {
  /** Its name and version (docs/agents.md, "Versions"). */
  readonly ref: AgentRef;
  readonly definition: AgentDefinition;
  /** The provider, model, fallback and credentials, in the shape `createLlm` takes. */
  readonly llm: LlmConfig;
  readonly profile: AgentProfile;
  readonly retry: RetryPolicy;
  /** The tool names it lists; `null` when it lists none (it gets the built-ins only). */
  readonly toolNames: readonly string[] | null;
  /** The MCP servers it lists, in order. */
  readonly mcpServers: readonly McpServerEntry['mcp'][];
}

/** The variable each provider's key is read from unless an agent names another. */
const CREDENTIAL_VARIABLES: Record<Exclude<LlmProviderName, 'scripted'>, { apiKey: string }> = {
  openai: { apiKey: 'OPENAI_API_KEY' },
  anthropic: { apiKey: 'ANTHROPIC_API_KEY' },
};

const httpUrl = url(['http:', 'https:']);

/**
 * Fills in an agent's defaults from the worker's configuration (`LLM_PROVIDER`, `LLM_MODEL`, the
 * timeouts) and reads its credentials from `env` by the variable names it gives. Throws
 * `config.invalid` naming the agent and the field: a key that is not set, a base URL that is not an
 * http(s) URL (never echoed: it may hold a password), limits that contradict each other.
 *
 * @param base - the profile fields the definition leaves out (the worker's own, for `default`).
 */
export function resolveAgent(definition: AgentDefinition, config: ResolvedConfig, env: NodeJS.ProcessEnv, base: Partial<AgentProfile> = {}): ResolvedAgent {
  const label = `agent "${definition.name}"`;
  try {
    const provider = definition.provider ?? config.llm.provider;
    const model = definition.model ?? (provider === config.llm.provider ? config.llm.model : DEFAULT_MODEL[provider]);
    const fallback = (definition.fallback ?? []).map((pair) => {
      const separator = pair.indexOf(':');
      return { provider: pair.slice(0, separator) as LlmProviderName, model: pair.slice(separator + 1) };
    });
    const llm: LlmConfig = Object.assign({}, config.llm, { provider, model, fallback });
    for (const used of new Set([provider, ...fallback.map((pair) => pair.provider)])) {
      if (used === 'scripted') continue;
      llm[used] = endpoint(definition, used, used === provider, config, env);
    }
    return {
      ref: { name: definition.name, version: agentVersion(definition) },
      definition,
      llm,
      profile: checkedAgentProfile({ ...base, ...profileFields(definition) }),
      retry: resolveRetryPolicy(definition.retry ?? {}),
      toolNames: definition.tools === undefined ? null : definition.tools.filter((tool): tool is string => typeof tool === 'string'),
      mcpServers: (definition.tools ?? []).filter((tool): tool is McpServerEntry => typeof tool !== 'string').map((tool) => tool.mcp),
    };
  } catch (error) {
    if (error instanceof ConfigInvalidError) throw new ConfigInvalidError(`${label}: ${error.message}`, { details: Object.assign({}, error.details, { agent: definition.name }) });
    throw error;
  }
}

/**
 * The key and base URL of `provider` for this agent. The primary provider reads the variables the
 * agent names (`apiKeyEnv`, `baseUrlEnv`); what it does not name, and a fallback provider, take the
 * worker's own (`OPENAI_API_KEY`, `ANTHROPIC_BASE_URL`, …, as loaded with the configuration).
 */
function endpoint(
  definition: AgentDefinition,
  provider: Exclude<LlmProviderName, 'scripted'>,
  primary: boolean,
  config: ResolvedConfig,
  env: NodeJS.ProcessEnv,
): { apiKey: string | null; baseUrl: string | null } {
  const own = config.llm[provider];
  const keyVariable = primary ? definition.apiKeyEnv : undefined;
  const apiKey = keyVariable === undefined ? own.apiKey : nonEmpty(env[keyVariable]);
  if (apiKey === null) {
    const variable = keyVariable ?? CREDENTIAL_VARIABLES[provider].apiKey;
    const field = keyVariable !== undefined ? 'apiKeyEnv' : primary ? 'provider' : 'fallback';
    throw new ConfigInvalidError(`${field}: ${variable} is not set, and the ${provider} provider needs a key`);
  }
  const urlVariable = primary ? definition.baseUrlEnv : undefined;
  if (urlVariable === undefined) return { apiKey, baseUrl: own.baseUrl };
  const rawUrl = nonEmpty(env[urlVariable]);
  if (rawUrl === null) return { apiKey, baseUrl: null };
  const parsed = httpUrl(rawUrl);
  if (!parsed.ok) throw new ConfigInvalidError(`baseUrlEnv: ${urlVariable} ${parsed.message}`);
  return { apiKey, baseUrl: parsed.value };
}

/** An environment value, trimmed; `null` when unset or blank (`FOO=` means "not configured"). */
function nonEmpty(value: string | undefined): string | null {
  const trimmed = value?.trim() ?? '';
  return trimmed === '' ? null : trimmed;
}

/** The definition's fields under the profile's names; those it leaves out are absent. */
function profileFields(definition: AgentDefinition): Partial<AgentProfile> {
  const fields: Partial<AgentProfile> = {
    systemPrompt: definition.systemPrompt,
    maxRounds: definition.maxRounds,
    maxOutputTokens: definition.maxOutputTokens,
    temperature: definition.temperature,
    maxTokensPerInput: definition.maxTokensPerInput,
    contextBudgetTokens: definition.contextBudgetTokens,
    compactTriggerRatio: definition.compaction?.triggerRatio,
    compactKeepLastInputs: definition.compaction?.keepLastInputs,
    compactModel: definition.compaction?.model,
    emptyResponseRetries: definition.emptyResponseRetries,
    truncationNotices: definition.truncationNotices,
    responseFormat: definition.responseFormat,
    toolConcurrency: definition.toolConcurrency,
    maxToolResultChars: definition.maxToolResultChars,
    subagents: definition.subagents,
    maxSpawnDepth: definition.maxSpawnDepth,
    maxChildrenPerInput: definition.maxChildrenPerInput,
  };
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<AgentProfile>;
}

/**
 * The one agent of a worker without `LOOPFLEET_AGENTS`: `default`, on the worker's own model,
 * fallback and profile, with every tool it loaded — what every worker ran before agents existed. Its
 * version hashes what it runs with, so a changed model or prompt shows as a new version.
 */
export function defaultAgent(config: ResolvedConfig, profile: AgentProfile, toolNames: readonly string[]): ResolvedAgent {
  const { provider, model, fallback } = config.llm;
  const definition: AgentDefinition = { name: DEFAULT_SESSION_AGENT, provider, model };
  return {
    ref: { name: DEFAULT_SESSION_AGENT, version: agentVersion(Object.assign({}, definition, { fallback, profile, tools: toolNames })) },
    definition,
    llm: config.llm,
    profile,
    retry: resolveRetryPolicy(),
    toolNames,
    mcpServers: [],
  };
}
