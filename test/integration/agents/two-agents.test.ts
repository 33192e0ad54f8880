/**
 * Many agents on one worker (docs/agents.md): two agents from a `LOOPFLEET_AGENTS` JSON file, one
 * on the real OpenAI SDK and one on the real Anthropic SDK (each against its fake server on
 * loopback, each with its own key read from the variable its definition names), served by ONE
 * worker process. Each session's requests carry its agent's model, system prompt, tools and output
 * cap; its events and result name the agent and version.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentVersion, type AgentDefinition } from '../../../src/agents/index.js';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { eventStreamKey } from '../../../src/fleet/fleet-keys.js';
import { textStep } from '../../support/fake-anthropic-server.js';
import { textStream } from '../../support/fake-openai-server.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { useFakeProviderServers } from '../llm/fake-provider-servers.js';

const servers = useFakeProviderServers();

const SUPPORT: AgentDefinition = {
  name: 'support',
  provider: 'openai',
  model: 'gpt-support',
  apiKeyEnv: 'SUPPORT_OPENAI_KEY',
  baseUrlEnv: 'SUPPORT_OPENAI_URL',
  systemPrompt: 'You are the support agent.',
  tools: ['current_time'],
  maxOutputTokens: 321,
};

const CODER: AgentDefinition = {
  name: 'coder',
  provider: 'anthropic',
  model: 'claude-coder',
  apiKeyEnv: 'CODER_ANTHROPIC_KEY',
  baseUrlEnv: 'CODER_ANTHROPIC_URL',
  systemPrompt: 'You are the coding agent.',
  tools: ['request_user_input'],
  maxOutputTokens: 654,
  metadata: { team: 'platform' },
};

describe('two agents, two providers, one worker', () => {
  let fleet: FleetFixture;

  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'loopfleet-agents-'));
    const file = join(dir, 'agents.json');
    await writeFile(file, JSON.stringify([SUPPORT, CODER]));
    fleet = await FleetFixture.create('two_agents', { LOOPFLEET_AGENTS: file });
    await fleet.startWorker({
      env: {
        SUPPORT_OPENAI_KEY: 'sk-support-key',
        SUPPORT_OPENAI_URL: servers.openai.url,
        CODER_ANTHROPIC_KEY: 'sk-ant-coder-key',
        CODER_ANTHROPIC_URL: servers.anthropic.url,
      },
    });
  });

  afterAll(async () => {
    await fleet?.close();
  });

  async function send(sessionId: string, input: string, options?: Record<string, unknown>): Promise<void> {
    await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: options === undefined ? { input } : { input, options } });
  }

  async function streamEvents(sessionId: string): Promise<Record<string, unknown>[]> {
    const entries = await fleet.redis.xrange(eventStreamKey(fleet.config.queueName, sessionId), '-', '+');
    return entries.map(([, fields]) => Object.assign({ type: fields[fields.indexOf('type') + 1] }, JSON.parse(fields[fields.indexOf('data') + 1]!) as Record<string, unknown>));
  }

  it("each session's calls carry its agent's model, key, system prompt, tools and output cap", async () => {
    await fleet.store.createSession({ id: 'ask-support', agent: 'support' });
    await fleet.store.createSession({ id: 'ask-coder', agent: 'coder' });
    servers.openai.enqueue(textStream(['support ', 'here']));
    servers.anthropic.push(textStep(['coder ', 'here']));
    await send('ask-support', 'my order is late');
    await send('ask-coder', 'write a loop');
    const [support] = await fleet.waitForSessionFinished('ask-support', 1);
    const [coder] = await fleet.waitForSessionFinished('ask-coder', 1);
    expect(support!.result).toMatchObject({ status: 'completed', finalText: 'support here', agent: { name: 'support', version: agentVersion(SUPPORT) } });
    expect(coder!.result).toMatchObject({ status: 'completed', finalText: 'coder here', agent: { name: 'coder', version: agentVersion(CODER) } });

    const openaiRequest = servers.openai.requests.at(-1)!;
    expect(openaiRequest.headers.authorization).toBe('Bearer sk-support-key');
    expect(openaiRequest.body).toMatchObject({ model: 'gpt-support', max_tokens: 321 });
    expect((openaiRequest.body['messages'] as { role: string; content: unknown }[])[0]).toEqual({ role: 'system', content: 'You are the support agent.' });
    expect((openaiRequest.body['tools'] as { function: { name: string } }[]).map((tool) => tool.function.name)).toEqual(['current_time']);

    const anthropicRequest = servers.anthropic.requests.at(-1)!;
    expect(anthropicRequest.headers['x-api-key']).toBe('sk-ant-coder-key');
    expect(anthropicRequest.body).toMatchObject({ model: 'claude-coder', max_tokens: 654 });
    expect(JSON.stringify(anthropicRequest.body!['system'])).toContain('You are the coding agent.');
    expect((anthropicRequest.body!['tools'] as { name: string }[]).map((tool) => tool.name)).toEqual(['request_user_input']);
  });

  it('input_started and input_finished name the agent and its version', async () => {
    const events = await streamEvents('ask-coder');
    const started = events.find((event) => event['type'] === 'input_started');
    const finished = events.find((event) => event['type'] === 'input_finished');
    expect(started).toMatchObject({ agent: { name: 'coder', version: agentVersion(CODER) } });
    expect(finished).toMatchObject({ agent: { name: 'coder', version: agentVersion(CODER) } });
  });

  it("an input's model override reaches its agent's provider; the next input is back on the agent's model", async () => {
    servers.openai.enqueue(textStream(['big']), textStream(['small']));
    await send('ask-support', 'think harder', { model: 'gpt-support-large' });
    await send('ask-support', 'and now?');
    await fleet.waitForSessionFinished('ask-support', 3);
    expect(servers.openai.requests.slice(-2).map((request) => request.body['model'])).toEqual(['gpt-support-large', 'gpt-support']);
  });

  it('a session that names no agent runs on the first agent when none is named default', async () => {
    servers.openai.enqueue(textStream(['first agent']));
    await send('no-agent-named', 'hello');
    const [input] = await fleet.waitForSessionFinished('no-agent-named', 1);
    expect(input!.result).toMatchObject({ finalText: 'first agent', agent: { name: 'support' } });
    expect(servers.openai.requests.at(-1)!.body['model']).toBe('gpt-support');
  });

  it('an input of an agent this worker does not serve fails agent.not_found without a model call', async () => {
    const calls = servers.openai.requests.length + servers.anthropic.requests.length;
    // Written straight to Postgres: a producer refuses an agent no worker registered (a worker of a
    // rolling deploy that has not got the agent yet sees such a session).
    await fleet.pool.query("INSERT INTO sessions (id, agent) VALUES ('ghost-agent', 'ghost')");
    await send('ghost-agent', 'anyone?');
    const [input] = await fleet.waitForSessionFinished('ghost-agent', 1);
    expect(input).toMatchObject({ status: 'failed', errorCode: 'agent.not_found' });
    expect(input!.errorMessage).toContain('does not serve agent "ghost"');
    expect(servers.openai.requests.length + servers.anthropic.requests.length).toBe(calls);
  });
});
