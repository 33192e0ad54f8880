import { describe, expect, it } from 'vitest';
import { resolveAgent } from '../../../src/agents/index.js';
import { loadConfig } from '../../../src/config/index.js';
import { systemClock } from '../../../src/core/ports/clock.js';
import { currentTimeTool, requestUserInputTool, ToolRegistry, type AnyToolDefinition } from '../../../src/core/tools/index.js';
import { ScriptedLlm } from '../../../src/llm/scripted-llm.js';
import { AgentCatalog } from '../../../src/worker/agent-catalog.js';

const config = loadConfig({ LLM_PROVIDER: 'scripted' });
const lookup = { name: 'lookup', description: 'd', parameters: { type: 'object' }, execute: () => 'x' } as AnyToolDefinition;
const loaded = ToolRegistry.from([currentTimeTool(systemClock) as AnyToolDefinition, requestUserInputTool as AnyToolDefinition, lookup]);
const llm = () => new ScriptedLlm([]);

const catalogOf = (...names: (string | { name: string; tools?: string[] })[]) =>
  AgentCatalog.build(
    names.map((entry) => resolveAgent(typeof entry === 'string' ? { name: entry } : entry, config, {})),
    { loaded, llm },
  );

describe('AgentCatalog', () => {
  it('a session stored under "default" runs on the agent named default when there is one', () => {
    const catalog = catalogOf('support', 'default');
    expect(catalog.forSession('default')?.ref.name).toBe('default');
    expect(catalog.forSession('support')?.ref.name).toBe('support');
  });

  it('…else on the first agent; an unknown name is not served', () => {
    const catalog = catalogOf('support', 'coder');
    expect(catalog.forSession('default')?.ref.name).toBe('support');
    expect(catalog.forSession('ghost')).toBeUndefined();
    expect(catalog.list().map((agent) => agent.ref.name)).toEqual(['support', 'coder']);
  });

  it('an agent gets exactly the tools it lists, the built-ins when it lists none', () => {
    const catalog = catalogOf({ name: 'plain' }, { name: 'picky', tools: ['lookup'] }, { name: 'none', tools: [] });
    expect(catalog.forSession('plain')!.tools().names()).toEqual(['current_time', 'request_user_input']);
    expect(catalog.forSession('picky')!.tools().names()).toEqual(['lookup']);
    expect(catalog.forSession('none')!.tools().names()).toEqual([]);
    expect(catalog.hasTool('lookup')).toBe(true);
    expect(catalog.hasTool('made_up')).toBe(false);
  });

  it("a tool of the agent's own named like an MCP server's tools is refused", () => {
    const clash = Object.assign({}, lookup, { name: 'docs__lookup' });
    const withClash = ToolRegistry.from([lookup, clash]);
    expect(() =>
      AgentCatalog.build([resolveAgent({ name: 'c', tools: ['docs__lookup', { mcp: { name: 'docs', url: 'http://127.0.0.1:1/mcp' } }] }, config, {})], { loaded: withClash, llm }),
    ).toThrow('agent "c": tools: "docs__lookup" looks like a tool of MCP server "docs"; rename one of them');
  });

  it('a tool name the worker did not load is refused, naming the agent and the hint for schedule_wakeup', () => {
    expect(() => catalogOf({ name: 'timed', tools: ['schedule_wakeup', 'nope'] })).toThrow(
      /agent "timed": tools: unknown tool\(s\) schedule_wakeup, nope \(schedule_wakeup needs LOOPFLEET_AGENT_TIMERS=true\); known: current_time, request_user_input, lookup/,
    );
  });

  it("live tools (an MCP server's) join the agent's own, read at each call", () => {
    let extra = ToolRegistry.from([]);
    const catalog = AgentCatalog.build([resolveAgent({ name: 'm', tools: ['lookup', { mcp: { name: 'docs', url: 'http://127.0.0.1:1/mcp' } }] }, config, {})], { loaded, llm, mcp: () => [{ current: () => extra }] });
    expect(catalog.forSession('m')!.tools().names()).toEqual(['lookup']);
    extra = ToolRegistry.from([Object.assign({}, lookup, { name: 'docs__search' })]);
    expect(catalog.forSession('m')!.tools().names()).toEqual(['lookup', 'docs__search']);
  });
});
