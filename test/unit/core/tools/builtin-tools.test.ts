import { describe, expect, it } from 'vitest';
import {
  REQUEST_USER_INPUT,
  ToolRegistry,
  currentTimeTool,
  executeToolCall,
  requestUserInputTool,
} from '../../../../src/core/tools/index.js';
import { toolCall } from './fixtures.js';
import { ManualClock } from './manual-clock.js';

describe('current_time', () => {
  it('returns the clock time in UTC and is concurrency-safe', async () => {
    const clock = new ManualClock(Date.UTC(2025, 5, 30, 12, 0, 1, 250));
    const tools = ToolRegistry.from([currentTimeTool(clock)]);
    const outcome = await executeToolCall(tools, toolCall('c1', 'current_time', ''), { sessionId: 's', signal: new AbortController().signal, clock });
    expect(JSON.parse(outcome.content)).toEqual({ iso: '2025-06-30T12:00:01.250Z', epochMs: Date.UTC(2025, 5, 30, 12, 0, 1, 250), timezone: 'UTC' });
    expect(tools.get('current_time')?.concurrencySafe).toBe(true);
  });

  it('takes no arguments', () => {
    const tool = ToolRegistry.from([currentTimeTool(new ManualClock())]).get('current_time')!;
    expect(tool.checkArguments({})).toEqual({ ok: true });
    expect(tool.checkArguments({ tz: 'CET' })).toEqual({ ok: false, message: expect.stringContaining('must NOT have additional properties (found "tz")') });
  });
});

describe('request_user_input', () => {
  const tool = () => ToolRegistry.from([requestUserInputTool]).get(REQUEST_USER_INPUT)!;

  it('is named by the exported constant', () => {
    expect(REQUEST_USER_INPUT).toBe('request_user_input');
    expect(requestUserInputTool.name).toBe(REQUEST_USER_INPUT);
  });

  it('accepts a prompt with an optional kind, options and metadata', () => {
    expect(tool().checkArguments({ prompt: 'Proceed?' })).toEqual({ ok: true });
    expect(tool().checkArguments({ prompt: 'Pick', kind: 'choice', options: ['a', 'b'], metadata: { step: 2 } })).toEqual({ ok: true });
  });

  it.each<[Record<string, unknown>, string]>([
    [{}, "must have required property 'prompt'"],
    [{ prompt: 3 }, '/prompt must be string'],
    [{ prompt: 'x', kind: 'essay' }, '/kind must be equal to one of the allowed values: "text", "choice", "confirm"'],
    [{ prompt: 'x', options: ['a', 1] }, '/options/1 must be string'],
    [{ prompt: 'x', metadata: 'm' }, '/metadata must be object'],
  ])('rejects %j', (args, message) => {
    const check = tool().checkArguments(args);
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.message).toContain(message);
  });

  it('cannot be executed: the loop intercepts it', async () => {
    const tools = ToolRegistry.from([requestUserInputTool]);
    const outcome = await executeToolCall(tools, toolCall('c1', REQUEST_USER_INPUT, { prompt: 'hi' }), {
      sessionId: 's',
      signal: new AbortController().signal,
      clock: new ManualClock(),
    });
    expect(outcome).toMatchObject({ failed: true, errorCode: 'tool.failed' });
    expect(outcome.content).toMatch(/handled by the agent loop/);
  });
});
