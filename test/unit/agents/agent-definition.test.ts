import { describe, expect, it } from 'vitest';
import { thrownBy } from './thrown-by.js';
import { agentVersion, canonicalJson, checkAgentDefinitions, defineAgent } from '../../../src/agents/index.js';


describe('agent definitions', () => {
  it('defineAgent returns the definition, frozen', () => {
    const agent = defineAgent({ name: 'support', model: 'gpt-4o', tools: ['current_time', { mcp: { name: 'docs', url: 'http://127.0.0.1:1/mcp' } }] });
    expect(agent).toMatchObject({ name: 'support', model: 'gpt-4o' });
    expect(Object.isFrozen(agent)).toBe(true);
  });

  it.each([
    [{ name: 'has space' }, 'agent #0: name: must be 1-64 characters'],
    [{ name: 'a'.repeat(65) }, 'agent #0: name'],
    [{ name: 'ok', maxRounds: 0 }, 'agent "ok": maxRounds:'],
    [{ name: 'ok', temperature: 3 }, 'agent "ok": temperature:'],
    [{ name: 'ok', provider: 'gemini' }, 'agent "ok": provider:'],
    [{ name: 'ok', fallback: ['anthropic'] }, 'agent "ok": fallback.0: must be provider:model'],
    [{ name: 'ok', apiKeyEnv: 'sk-not-a-variable' }, 'agent "ok": apiKeyEnv: must be an environment variable name'],
    [{ name: 'ok', tools: ['bad name!'] }, 'agent "ok": tools.0'],
    [{ name: 'ok', compaction: { triggerRatio: 0 } }, 'agent "ok": compaction.triggerRatio:'],
    [{ name: 'ok', retry: { initialDelayMs: 900, maxDelayMs: 100 } }, 'agent "ok": retry: maxDelayMs must be at least initialDelayMs'],
    [{ name: 'ok', maxRound: 3 }, 'agent "ok": (agent): Unrecognized key: "maxRound"'],
  ])('refuses %j naming the agent and the field', (definition, message) => {
    const error = thrownBy(() => defineAgent(definition as never));
    expect(error.code).toBe('config.invalid');
    expect(error.message).toContain(message);
  });

  it('a file must be a non-empty array with unique names; the message names the source', () => {
    expect(thrownBy(() => checkAgentDefinitions({}, 'LOOPFLEET_AGENTS (a.json)')).message).toBe('LOOPFLEET_AGENTS (a.json): must be a non-empty array of agent definitions');
    expect(thrownBy(() => checkAgentDefinitions([], 'src')).code).toBe('config.invalid');
    expect(thrownBy(() => checkAgentDefinitions([{ name: 'a' }, { name: 'a' }], 'src')).message).toBe('src: agents #0 and #1 are both named "a"');
    expect(thrownBy(() => checkAgentDefinitions([{ name: 'a' }, 'b'], 'src')).message).toBe('src: agent #1: must be an object');
    expect(checkAgentDefinitions([{ name: 'a' }, { name: 'b', model: 'm' }], 'src').map((agent) => agent.name)).toEqual(['a', 'b']);
  });

  it('the version hashes the definition: key order does not matter, any field does', () => {
    const version = agentVersion({ name: 'a', model: 'm', metadata: { x: 1, y: [1, 2] } });
    expect(version).toMatch(/^[0-9a-f]{12}$/);
    expect(agentVersion({ metadata: { y: [1, 2], x: 1 }, model: 'm', name: 'a' })).toBe(version);
    expect(agentVersion({ name: 'a', model: 'm', metadata: { x: 2, y: [1, 2] } })).not.toBe(version);
    expect(agentVersion({ name: 'a', model: 'm', metadata: { x: 1, y: [2, 1] } })).not.toBe(version);
    expect(canonicalJson({ b: 1, a: { d: 1, c: 2 } })).toBe('{"a":{"c":2,"d":1},"b":1}');
  });
});
