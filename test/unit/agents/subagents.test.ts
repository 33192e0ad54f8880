import { describe, expect, it } from 'vitest';
import { checkAgentDefinitions, defineAgent, resolveAgent } from '../../../src/agents/index.js';
import { loadConfig } from '../../../src/config/index.js';
import { thrownBy } from './thrown-by.js';

describe('subagents in agent definitions', () => {
  it('every subagent must be an agent of the same file', () => {
    const error = thrownBy(() => checkAgentDefinitions([{ name: 'lead', subagents: ['reader', 'ghost'] }, { name: 'reader' }], 'LOOPFLEET_AGENTS (a.json)'));
    expect(error.code).toBe('config.invalid');
    expect(error.message).toBe('LOOPFLEET_AGENTS (a.json): agent "lead": subagents: "ghost" not defined in this file');
    expect(checkAgentDefinitions([{ name: 'lead', subagents: ['reader'] }, { name: 'reader' }], 'src').map((agent) => agent.subagents)).toEqual([['reader'], undefined]);
  });

  it.each([
    [{ name: 'ok', subagents: ['bad name'] }, 'agent "ok": subagents.0: must be an agent name'],
    [{ name: 'ok', subagents: ['a', 'a'] }, 'agent "ok": subagents: names an agent twice'],
    [{ name: 'ok', maxSpawnDepth: 0 }, 'agent "ok": maxSpawnDepth:'],
    [{ name: 'ok', maxSpawnDepth: 17 }, 'agent "ok": maxSpawnDepth:'],
    [{ name: 'ok', maxChildrenPerInput: 0 }, 'agent "ok": maxChildrenPerInput:'],
    [{ name: 'ok', maxChildrenPerInput: 65 }, 'agent "ok": maxChildrenPerInput:'],
  ])('refuses %j naming the field', (definition, message) => {
    const error = thrownBy(() => defineAgent(definition as never));
    expect(error.code).toBe('config.invalid');
    expect(error.message).toContain(message);
  });

  it('the profile carries the subagents and limits, with defaults 3 and 8', () => {
    const config = loadConfig({});
    expect(resolveAgent({ name: 'plain' }, config, {}).profile).toMatchObject({ subagents: [], maxSpawnDepth: 3, maxChildrenPerInput: 8 });
    const lead = resolveAgent({ name: 'lead', subagents: ['reader'], maxSpawnDepth: 2, maxChildrenPerInput: 4 }, config, {});
    expect(lead.profile).toMatchObject({ subagents: ['reader'], maxSpawnDepth: 2, maxChildrenPerInput: 4 });
  });
});
