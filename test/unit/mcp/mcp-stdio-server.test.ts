import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/core/ports/clock.js';
import { runToolBatch, ToolRegistry, type AnyToolDefinition } from '../../../src/core/tools/index.js';
import { McpToolServer, parseMcpServerSpec, type McpServerStatus } from '../../../src/mcp/index.js';
import { LONG_TOOL_NAME } from '../../support/mcp/test-tools.js';
import { pollUntil, RecordingLogger, runTool, STDIO_SERVER, stateDir } from '../../support/mcp/mcp-harness.js';

/** A stdio test server (a real child process) named `srv`. */
function stdioServer(dir: string, statuses: McpServerStatus[] = [], logger = new RecordingLogger()): McpToolServer {
  const spec = parseMcpServerSpec({ mcp: { name: 'srv', ...STDIO_SERVER, env: { MCP_TEST_STATE_DIR: dir, TEST_SECRET: 'sesame-42' }, timeoutMs: 30_000 } });
  return new McpToolServer(spec, { logger, onStatus: (status) => statuses.push(status), backoff: { initialMs: 20, maxMs: 200 } });
}

describe('McpToolServer over stdio: tools and calls', () => {
  const dir = stateDir();
  const logger = new RecordingLogger();
  const server = stdioServer(dir.path, [], logger);
  beforeAll(() => server.start(), 60_000);
  afterAll(async () => {
    await server.close();
    dir.cleanup();
  });

  it('offers the server tools as <server>__<tool>, with their descriptions, schemas and policies', () => {
    const tools = server.tools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['srv__echo', 'srv__parts', 'srv__meta', 'srv__pid', 'srv__hang_once_idem', 'srv__hang_once']));
    const echo = tools.find((tool) => tool.name === 'srv__echo')!;
    expect(echo.description).toBe('Says the text back.');
    expect(echo.parameters).toMatchObject({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
    expect(echo).toMatchObject({ policy: 'retry', concurrencySafe: true, timeoutMs: 30_000 });
    expect(tools.find((tool) => tool.name === 'srv__hang_once')).toMatchObject({ policy: 'fail', concurrencySafe: false });
  });

  it('leaves out a tool whose offered name would break the 64-character rule, with a warning', () => {
    expect(server.tools().some((tool) => tool.name.includes(LONG_TOOL_NAME))).toBe(false);
    expect(logger.warnings().some((line) => line.includes('MCP tool left out') && line.includes(LONG_TOOL_NAME))).toBe(true);
  });

  it('returns the text parts joined with newlines, and other parts as a line of text each', async () => {
    expect(await runTool(server.tools(), 'srv__echo', { text: 'hello\nworld' })).toMatchObject({ failed: false, content: 'hello\nworld' });
    const parts = await runTool(server.tools(), 'srv__parts');
    expect(parts.content).toBe(['first line', 'second line', '[image: image/png, 70 bytes]', 'embedded note', '[resource link: test://linked]'].join('\n'));
  });

  it('sends the idempotency key in _meta', async () => {
    const outcome = await runTool(server.tools(), 'srv__meta', {}, 'call-77');
    expect(JSON.parse(outcome.content)).toMatchObject({ 'loopfleet/idempotencyKey': 's1:call-77' });
  });

  it('gives the process the spec env on top of the default environment', async () => {
    expect((await runTool(server.tools(), 'srv__env', { name: 'TEST_SECRET' })).content).toBe('sesame-42');
    expect((await runTool(server.tools(), 'srv__env', { name: 'PATH' })).content).not.toBe('(unset)');
  });

  it('turns isError into a failed call the model sees', async () => {
    expect(await runTool(server.tools(), 'srv__fails')).toMatchObject({ failed: true, errorCode: 'tool.failed', content: 'Error: the disk is full' });
  });

  it('refuses arguments that break the input schema before they reach the server', async () => {
    const outcome = await runTool(server.tools(), 'srv__echo', { text: 42 });
    expect(outcome).toMatchObject({ failed: true, errorCode: 'tool.invalid_args' });
    expect(outcome.content).toMatch(/text/);
  });

  it('runs through the loop batch executor', async () => {
    const registry = ToolRegistry.from(server.tools());
    const calls = [
      { id: 'a', name: 'srv__echo', arguments: '{"text":"one"}' },
      { id: 'b', name: 'srv__echo', arguments: '{"text":"two"}' },
      { id: 'c', name: 'srv__meta', arguments: '{}' },
    ];
    const outcomes = await runToolBatch(registry, calls, { sessionId: 'batch', signal: new AbortController().signal, clock: systemClock });
    expect(outcomes.map((outcome) => outcome.content.slice(0, 3))).toEqual(['one', 'two', '{"l']);
    expect(outcomes[2]!.content).toContain('batch:c');
  });

  it('lists the tools again on notifications/tools/list_changed', async () => {
    const changed = new Promise<readonly AnyToolDefinition[]>((resolve) => server.onChange(resolve));
    expect((await runTool(server.tools(), 'srv__add_tool')).content).toBe('ok');
    const tools = await changed;
    expect(tools.map((tool) => tool.name)).toContain('srv__added');
    expect((await runTool(server.tools(), 'srv__added')).content).toBe('added here');
  });
});

describe('McpToolServer over stdio: a server killed mid-call', () => {
  const dir = stateDir();
  const statuses: McpServerStatus[] = [];
  const server = stdioServer(dir.path, statuses);
  beforeAll(() => server.start(), 60_000);
  afterAll(async () => {
    await server.close();
    dir.cleanup();
  });

  /** Starts `tool` and kills the server once the call has reached it; returns the outcome. */
  async function killDuring(tool: string, id: string) {
    const pid = Number((await runTool(server.tools(), 'srv__pid')).content);
    const outcome = runTool(server.tools(), tool, {}, id);
    await pollUntil(() => existsSync(join(dir.path, `started-s1_${id}`)), `the call ${id} to reach the server`);
    process.kill(pid, 'SIGKILL');
    return { pid, outcome: await outcome };
  }

  it('calls an idempotent tool again on the restarted server, with the same key', async () => {
    const { pid, outcome } = await killDuring('srv__hang_once_idem', 'k1');
    expect(outcome).toMatchObject({ failed: false, content: 'done s1:k1' });
    expect(Number((await runTool(server.tools(), 'srv__pid')).content)).not.toBe(pid);
    expect(statuses.map((status) => status.state)).toEqual(['starting', 'up', 'restarting', 'up']);
  }, 60_000);

  it('fails a tool without idempotentHint as "unknown", then calls the restarted server', async () => {
    const { pid, outcome } = await killDuring('srv__hang_once', 'k2');
    expect(outcome).toMatchObject({ failed: true, errorCode: 'tool.failed' });
    expect(outcome.content).toBe('Error: MCP server "srv" exited during the call to "hang_once"; whether the call took effect is unknown');
    const after = await runTool(server.tools(), 'srv__pid');
    expect(after.failed).toBe(false);
    expect(Number(after.content)).not.toBe(pid);
    expect(server.tools().map((tool) => tool.name)).toContain('srv__hang_once');
  }, 60_000);
});
