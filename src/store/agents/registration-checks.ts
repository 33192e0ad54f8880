import { InputInvalidError } from '../../core/errors/index.js';
import type { AgentRegistration } from '../../core/ports/agent-registry.js';
import { assertAgentName } from '../../fleet/agent-name.js';
import { assertText, isPlainObject } from '../postgres/arguments.js';

/** Longest worker id (`host:pid:random`). */
const MAX_WORKER_ID_LENGTH = 200;
/** Longest provider or model name. */
const MAX_MODEL_LENGTH = 200;
/** Most agents one worker registers, and most tools one agent lists. */
const MAX_AGENTS = 256;

/** A worker id to write under, or `input.invalid`. */
export function checkWorkerId(value: unknown): string {
  return assertText(value, 'workerId', MAX_WORKER_ID_LENGTH);
}

/**
 * A worker's registration, checked whole before anything is written: every field present and in
 * bounds, names unique. Returns plain copies (what is stored).
 */
export function checkRegistrations(agents: unknown): AgentRegistration[] {
  if (!Array.isArray(agents) || agents.length > MAX_AGENTS) throw new InputInvalidError(`agents must be an array of at most ${MAX_AGENTS} registrations`);
  const checked = agents.map((agent: unknown) => checkRegistration(agent));
  const names = new Set<string>();
  for (const { name } of checked) {
    if (names.has(name)) throw new InputInvalidError(`agent "${name}" is registered twice`);
    names.add(name);
  }
  return checked;
}

function checkRegistration(agent: unknown): AgentRegistration {
  if (!isPlainObject(agent)) throw new InputInvalidError('an agent registration must be an object');
  const name = assertAgentName(agent.name, 'agent name');
  const tools = agent.tools;
  if (!Array.isArray(tools) || tools.length > MAX_AGENTS) throw new InputInvalidError(`agent "${name}": tools must be an array of at most ${MAX_AGENTS} names`);
  return {
    name,
    version: assertText(agent.version, `agent "${name}": version`, 64),
    provider: assertText(agent.provider, `agent "${name}": provider`, MAX_MODEL_LENGTH),
    model: assertText(agent.model, `agent "${name}": model`, MAX_MODEL_LENGTH),
    tools: tools.map((tool: unknown) => assertText(tool, `agent "${name}": tool name`, 64)),
  };
}

/** A prune bound: a non-negative safe integer of milliseconds, or `input.invalid`. */
export function checkStaleAfterMs(value: unknown): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  throw new InputInvalidError('staleAfterMs must be a non-negative integer of milliseconds');
}
