/**
 * An agent whose tools come from MCP servers (docs/mcp.md), through a real worker: one stdio server
 * (a child process) and one Streamable HTTP server, both written with the MCP SDK. The model calls a
 * tool of each in one round; the results reach the model verbatim, the ledger records the calls, and
 * the idempotency key `<sessionId>:<toolCallId>` travels in the call's `_meta`; an image a tool
 * returns reaches the model as an image part. A schema violation
 * goes back to the model as a tool error without reaching the server. An agent whose required server
 * cannot start stops the worker before it takes work; an optional one leaves its tools out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentDefinition } from '../../../src/agents/index.js';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { ScriptedLlm } from '../../../src/llm/scripted-llm.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { startTestHttpMcpServer, type TestHttpMcpServer } from '../../support/mcp/http-server.js';
import { stateDir, STDIO_SERVER } from '../../support/mcp/mcp-harness.js';

describe('an agent with MCP tool servers', () => {
  let fleet: FleetFixture;
  let http: TestHttpMcpServer;
  const state = stateDir();
  const llm = new ScriptedLlm([]);

  beforeAll(async () => {
    http = await startTestHttpMcpServer(state.path);
    fleet = await FleetFixture.create('mcp_agent');
    const agent: AgentDefinition = {
      name: 'researcher',
      provider: 'scripted',
      tools: [
        'current_time',
        { mcp: { name: 'local', command: STDIO_SERVER.command, args: STDIO_SERVER.args, env: { MCP_TEST_STATE_DIR: state.path, MCP_TEST_MARK: 'from-the-spec' } } },
        { mcp: { name: 'remote', url: http.url, headers: { 'x-api-key': 'mcp-key-1' } } },
        { mcp: { name: 'gone', command: '/nonexistent/mcp-server', optional: true } },
      ],
    };
    await fleet.startWorker({ agents: [agent], llm });
  });

  afterAll(async () => {
    await fleet?.close();
    await http?.close();
    state.cleanup();
  });

  it('offers every tool of both servers as <server>__<tool>, none of the absent optional one', async () => {
    llm.push({ text: 'listed' });
    await acceptAndKick(fleet.acceptDeps, { sessionId: 'mcp-list', kind: 'send', payload: { input: 'what can you do?' } });
    await fleet.waitForSessionFinished('mcp-list', 1);
    const offered = llm.requests.at(-1)!.tools.map((tool) => tool.name);
    expect(offered).toEqual(expect.arrayContaining(['current_time', 'local__echo', 'local__meta', 'remote__echo', 'remote__parts']));
    expect(offered.filter((name) => name.startsWith('gone__'))).toEqual([]);
  });

  it('the model calls a tool of each server in one round; results, ledger and idempotency key as for any tool', async () => {
    llm.push(
      {
        toolCalls: [
          { id: 'call-a', name: 'local__echo', arguments: { text: 'hello from stdio' } },
          { id: 'call-b', name: 'remote__meta', arguments: {} },
          { id: 'call-c', name: 'local__echo', arguments: { text: 42 } },
        ],
      },
      { text: 'done' },
    );
    await acceptAndKick(fleet.acceptDeps, { sessionId: 'mcp-call', kind: 'send', payload: { input: 'use your tools' } });
    const [input] = await fleet.waitForSessionFinished('mcp-call', 1);
    expect(input!.result).toMatchObject({ status: 'completed', finalText: 'done', toolCalls: 2 });
    const toolMessages = llm.requests.at(-1)!.messages.filter((message) => message.role === 'tool');
    expect(toolMessages.map((message) => message.content)).toEqual([
      'hello from stdio',
      JSON.stringify({ 'loopfleet/idempotencyKey': 'mcp-call:call-b' }),
      expect.stringMatching(/^Error: /),
    ]);
    const calls = await fleet.pool.query<{ tool_call_id: string; name: string; status: string; error_code: string | null }>(
      "SELECT tool_call_id, name, status, error_code FROM tool_calls WHERE session_id = 'mcp-call' ORDER BY tool_call_id",
    );
    expect(calls.rows).toEqual([
      { tool_call_id: 'call-a', name: 'local__echo', status: 'completed', error_code: null },
      { tool_call_id: 'call-b', name: 'remote__meta', status: 'completed', error_code: null },
      { tool_call_id: 'call-c', name: 'local__echo', status: 'failed', error_code: 'tool.invalid_args' },
    ]);
    expect(http.apiKeys.every((key) => key === 'mcp-key-1')).toBe(true);
  });

  it("an image a tool returns reaches the model as an image part of the tool result, beside the parts' text, and is stored so", async () => {
    llm.push({ toolCalls: [{ id: 'call-img', name: 'remote__parts', arguments: {} }] }, { text: 'seen' });
    await acceptAndKick(fleet.acceptDeps, { sessionId: 'mcp-image', kind: 'send', payload: { input: 'show me' } });
    await fleet.waitForSessionFinished('mcp-image', 1);
    const toolMessage = llm.requests.at(-1)!.messages.find((message) => message.role === 'tool')!;
    expect(toolMessage.content).toEqual([
      { type: 'text', text: expect.stringContaining('first line\nsecond line\n[image: image/png, 70 bytes]') },
      { type: 'image', url: expect.stringMatching(/^data:image\/png;base64,iVBOR/), mediaType: 'image/png' },
    ]);
    const stored = (await fleet.store.loadHistory('mcp-image')).find((row) => row.message.role === 'tool');
    expect(stored?.message.content).toEqual(toolMessage.content);
  });

  it('a tool list that changes (list_changed) is offered from the next run on, and listed in the registry', async () => {
    llm.push({ toolCalls: [{ id: 'call-add', name: 'local__add_tool', arguments: {} }] }, { text: 'added' }, { text: 'next' });
    await acceptAndKick(fleet.acceptDeps, { sessionId: 'mcp-change', kind: 'send', payload: { input: 'grow' } });
    await fleet.waitForSessionFinished('mcp-change', 1);
    const listed = await fleet.waitFor('the registry to list local__added', async () => {
      const rows = await fleet.pool.query<{ tools: string[] }>("SELECT tools FROM agent_registry WHERE name = 'researcher'");
      return rows.rows[0]?.tools.includes('local__added') === true ? rows.rows[0].tools : undefined;
    });
    expect(listed).toEqual(expect.arrayContaining(['local__echo', 'remote__echo', 'local__added']));
    await acceptAndKick(fleet.acceptDeps, { sessionId: 'mcp-change', kind: 'send', payload: { input: 'again' } });
    await fleet.waitForSessionFinished('mcp-change', 2);
    expect(llm.requests.at(-1)!.tools.map((tool) => tool.name)).toContain('local__added');
  });

  it('a stdio server gets its spec’s env on top of the SDK’s default environment', async () => {
    llm.push({ toolCalls: [{ id: 'call-env', name: 'local__env', arguments: { name: 'MCP_TEST_MARK' } }] }, { text: 'ok' });
    await acceptAndKick(fleet.acceptDeps, { sessionId: 'mcp-env', kind: 'send', payload: { input: 'env?' } });
    await fleet.waitForSessionFinished('mcp-env', 1);
    const toolMessage = llm.requests.at(-1)!.messages.find((message) => message.role === 'tool');
    expect(toolMessage?.content).toBe('from-the-spec');
  });
});

describe('an agent whose required MCP server cannot start', () => {
  it('stops the worker at start-up, naming the agent and the server, before it connects', async () => {
    const fleet = await FleetFixture.create('mcp_agent_required');
    try {
      const agent: AgentDefinition = { name: 'needs-it', provider: 'scripted', tools: [{ mcp: { name: 'missing', command: '/nonexistent/mcp-server' } }] };
      await expect(fleet.startWorker({ agents: [agent] })).rejects.toThrow(/agent "needs-it": MCP server "missing" cannot start/);
    } finally {
      await fleet.close();
    }
  });
});
