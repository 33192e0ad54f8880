import { describe, expect, it } from 'vitest';
import { thrownBy } from './thrown-by.js';
import { defaultAgent, resolveAgent } from '../../../src/agents/index.js';
import { loadConfig } from '../../../src/config/index.js';
import { DEFAULT_AGENT_PROFILE, resolveAgentProfile } from '../../../src/core/agent-profile.js';
import { DEFAULT_RETRY_POLICY } from '../../../src/core/retry/index.js';

const config = loadConfig({ OPENAI_API_KEY: 'sk-worker', OPENAI_BASE_URL: 'http://proxy.local/v1', LLM_MODEL: 'gpt-worker' });


describe('resolveAgent', () => {
  it('fills what the definition leaves out from the worker: provider, model, key, base URL, profile and retry defaults', () => {
    const agent = resolveAgent({ name: 'plain' }, config, {});
    expect(agent.ref).toEqual({ name: 'plain', version: expect.stringMatching(/^[0-9a-f]{12}$/) });
    expect(agent.llm).toMatchObject({ provider: 'openai', model: 'gpt-worker', fallback: [], openai: { apiKey: 'sk-worker', baseUrl: 'http://proxy.local/v1' } });
    expect(agent.profile).toEqual(DEFAULT_AGENT_PROFILE);
    expect(agent.retry).toEqual(DEFAULT_RETRY_POLICY);
    expect(agent.toolNames).toBeNull();
    expect(agent.mcpServers).toEqual([]);
  });

  it("another provider's default model when the agent names the provider but not the model", () => {
    const agent = resolveAgent({ name: 'a', provider: 'anthropic', apiKeyEnv: 'ANT_KEY' }, config, { ANT_KEY: 'sk-ant' });
    expect(agent.llm).toMatchObject({ provider: 'anthropic', model: 'claude-sonnet-4-5', anthropic: { apiKey: 'sk-ant', baseUrl: null } });
  });

  it('reads the key and base URL from the variables it names; maps every profile, compaction and retry field', () => {
    const agent = resolveAgent(
      {
        name: 'full',
        provider: 'openai',
        model: 'gpt-own',
        apiKeyEnv: 'MY_KEY',
        baseUrlEnv: 'MY_URL',
        systemPrompt: 'be brief',
        tools: ['current_time', { mcp: { name: 'docs', command: 'node' } }],
        maxRounds: 7,
        maxOutputTokens: 99,
        temperature: 0.5,
        contextBudgetTokens: 5000,
        compaction: { triggerRatio: 0.5, keepLastInputs: 2, model: 'gpt-small' },
        maxTokensPerInput: 10_000,
        retry: { maxAttempts: 5, initialDelayMs: 100, maxDelayMs: 1000, totalTimeoutMs: null, jitter: 0 },
        toolConcurrency: 2,
        maxToolResultChars: 500,
        emptyResponseRetries: 1,
        truncationNotices: 0,
      },
      config,
      { MY_KEY: ' sk-own ', MY_URL: 'https://own.example/v1' },
    );
    expect(agent.llm).toMatchObject({ provider: 'openai', model: 'gpt-own', openai: { apiKey: 'sk-own', baseUrl: 'https://own.example/v1' } });
    expect(agent.profile).toEqual(
      resolveAgentProfile({
        systemPrompt: 'be brief',
        maxRounds: 7,
        maxOutputTokens: 99,
        temperature: 0.5,
        contextBudgetTokens: 5000,
        compactTriggerRatio: 0.5,
        compactKeepLastInputs: 2,
        compactModel: 'gpt-small',
        maxTokensPerInput: 10_000,
        toolConcurrency: 2,
        maxToolResultChars: 500,
        emptyResponseRetries: 1,
        truncationNotices: 0,
      }),
    );
    expect(agent.retry).toEqual({ maxAttempts: 5, initialDelayMs: 100, maxDelayMs: 1000, totalTimeoutMs: null, jitter: 0 });
    expect(agent.toolNames).toEqual(['current_time']);
    expect(agent.mcpServers).toEqual([{ name: 'docs', command: 'node' }]);
  });

  it('a fallback pair uses its provider’s usual key', () => {
    const withBoth = loadConfig({ OPENAI_API_KEY: 'sk-o', ANTHROPIC_API_KEY: 'sk-a' });
    const agent = resolveAgent({ name: 'f', provider: 'openai', fallback: ['anthropic:claude-x'] }, withBoth, {});
    expect(agent.llm.fallback).toEqual([{ provider: 'anthropic', model: 'claude-x' }]);
    expect(agent.llm.anthropic.apiKey).toBe('sk-a');
  });

  it.each([
    [{ name: 'k', provider: 'openai', apiKeyEnv: 'UNSET_KEY' }, {}, 'agent "k": apiKeyEnv: UNSET_KEY is not set, and the openai provider needs a key'],
    [{ name: 'k', provider: 'anthropic' }, {}, 'agent "k": provider: ANTHROPIC_API_KEY is not set, and the anthropic provider needs a key'],
    [{ name: 'k', fallback: ['anthropic:c'] }, {}, 'agent "k": fallback: ANTHROPIC_API_KEY is not set'],
    [{ name: 'k', retry: { initialDelayMs: 20_000 } }, {}, 'agent "k": invalid retry policy: maxDelayMs'],
  ])('refuses %j naming the agent', (definition, env, message) => {
    const error = thrownBy(() => resolveAgent(definition as never, config, env));
    expect(error.code).toBe('config.invalid');
    expect(error.message).toContain(message);
  });

  it('a bad base URL is refused without echoing it (it may hold a password)', () => {
    const error = thrownBy(() => resolveAgent({ name: 'u', baseUrlEnv: 'MY_URL' }, config, { MY_URL: 'ftp://user:hunter2@x' }));
    expect(error.message).toContain('agent "u": baseUrlEnv: MY_URL must be a http:// or https:// URL');
    expect(error.message).not.toContain('hunter2');
  });
});

describe('defaultAgent', () => {
  it("is the worker's own model, fallback and profile with every loaded tool; its version changes with them", () => {
    const profile = resolveAgentProfile({ systemPrompt: 'p' });
    const agent = defaultAgent(config, profile, ['current_time', 'lookup']);
    expect(agent.ref.name).toBe('default');
    expect(agent.llm).toBe(config.llm);
    expect(agent.profile).toBe(profile);
    expect(agent.toolNames).toEqual(['current_time', 'lookup']);
    expect(defaultAgent(config, profile, ['current_time', 'lookup']).ref.version).toBe(agent.ref.version);
    expect(defaultAgent(config, profile, ['current_time']).ref.version).not.toBe(agent.ref.version);
    expect(defaultAgent(config, resolveAgentProfile({ systemPrompt: 'q' }), ['current_time', 'lookup']).ref.version).not.toBe(agent.ref.version);
  });
});
