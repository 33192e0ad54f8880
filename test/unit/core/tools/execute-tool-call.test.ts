import { describe, expect, it } from 'vitest';
import { CancelledError, ToolTimeoutError } from '../../../../src/core/errors/index.js';
import { systemClock, type Clock } from '../../../../src/core/ports/clock.js';
import {
  ToolRegistry,
  ToolResultWithImages,
  executeToolCall,
  type AnyToolDefinition,
  type ExecuteToolCallOptions,
  type ToolContext,
} from '../../../../src/core/tools/index.js';
import { simpleTool, toolCall, untilAborted } from './fixtures.js';
import { ManualClock } from './manual-clock.js';

function options(clock: Clock = new ManualClock(), signal = new AbortController().signal): ExecuteToolCallOptions {
  return { sessionId: 'sess-1', signal, clock };
}

async function runOne(definition: AnyToolDefinition, args: Record<string, unknown> | string = {}, opts = options()) {
  return executeToolCall(ToolRegistry.from([definition]), toolCall('call_1', definition.name, args), opts);
}

describe('executeToolCall: results', () => {
  it('returns a string result as it is, with the parsed arguments and the duration from the clock', async () => {
    const clock = new ManualClock();
    const echo = simpleTool('echo', (args: Record<string, unknown>) => {
      clock.advance(7);
      return `said ${String(args['text'])}`;
    });
    expect(await runOne(echo, { text: 'hi' }, options(clock))).toEqual({
      toolCallId: 'call_1',
      name: 'echo',
      content: 'said hi',
      failed: false,
      errorCode: null,
      durationMs: 7,
      args: { text: 'hi' },
    });
  });

  it('a result with images keeps them beside its (truncated) text', async () => {
    const image = { type: 'image' as const, url: 'data:image/png;base64,iVBORw0KGgo=', mediaType: 'image/png' };
    const chart = simpleTool('chart', () => new ToolResultWithImages('x'.repeat(200), [image]));
    const outcome = await runOne(chart, {}, Object.assign(options(), { maxResultChars: 150 }));
    expect(outcome).toMatchObject({ failed: false, images: [image] });
    expect(outcome.content.startsWith('x'.repeat(100))).toBe(true);
    expect(outcome.content).toContain('truncated');
    const plain = await runOne(simpleTool('plain', () => new ToolResultWithImages('just text', [])));
    expect(plain).toMatchObject({ content: 'just text' });
    expect(plain).not.toHaveProperty('images');
  });

  it('gives the handler its own copy of the arguments: what it changes is not what the ledger records', async () => {
    const charge = simpleTool('charge', (args: Record<string, unknown>) => {
      args['cents'] = 5n;
      (args['card'] as Record<string, unknown>)['number'] = 'redacted by the tool';
      return 'charged';
    });
    const outcome = await runOne(charge, { card: { number: '4242' } });
    expect(outcome).toMatchObject({ content: 'charged', failed: false, args: { card: { number: '4242' } } });
    expect(JSON.stringify(outcome.args)).toBe('{"card":{"number":"4242"}}');
  });

  it.each<[string, unknown, string]>([
    ['an object', { a: 1, b: ['x'] }, '{"a":1,"b":["x"]}'],
    ['a number', 42, '42'],
    ['a boolean', false, 'false'],
    ['undefined', undefined, ''],
    ['null', null, 'null'],
    ['an empty string', '', ''],
  ])('serialises %s', async (_label, value, content) => {
    const outcome = await runOne(simpleTool('t', async () => value));
    expect(outcome).toMatchObject({ content, failed: false, errorCode: null });
  });

  it('turns a value JSON cannot represent into a failure the model sees', async () => {
    const circular: Record<string, unknown> = {};
    circular['self'] = circular;
    for (const value of [circular, { n: 10n }, () => 1]) {
      const outcome = await runOne(simpleTool('t', () => value));
      expect(outcome.failed).toBe(true);
      expect(outcome.errorCode).toBe('tool.failed');
      expect(outcome.content).toMatch(/^Error: tool "t" returned a result that cannot be serialised to JSON: .+/);
    }
  });
});

describe('executeToolCall: failures are data', () => {
  it('a synchronous throw becomes "Error: <message>"', async () => {
    const outcome = await runOne(simpleTool('t', () => {
      throw new Error('disk full');
    }));
    expect(outcome).toMatchObject({ content: 'Error: disk full', failed: true, errorCode: 'tool.failed', args: {} });
  });

  it("a throw carrying code 'tool.invalid_args' (the handler's own argument check) is bad arguments, from any copy of the class", async () => {
    const outcome = await runOne(simpleTool('t', () => {
      throw Object.assign(new Error('invalid arguments for tool "t": /city name a city'), { code: 'tool.invalid_args' });
    }));
    expect(outcome).toMatchObject({ content: 'Error: invalid arguments for tool "t": /city name a city', failed: true, errorCode: 'tool.invalid_args' });
  });

  it('an async rejection becomes "Error: <message>"', async () => {
    const outcome = await runOne(simpleTool('t', async () => Promise.reject(new TypeError('bad input'))));
    expect(outcome).toMatchObject({ content: 'Error: bad input', failed: true, errorCode: 'tool.failed' });
  });

  it('a thrown non-Error is described too', async () => {
    const thrown = [['plain text', 'Error: plain text'], [Object.create(null), 'Error: the tool threw a value that is not an Error']] as const;
    for (const [value, content] of thrown) {
      const outcome = await runOne(simpleTool('t', () => {
        throw value;
      }));
      expect(outcome.content).toBe(content);
    }
  });

  it('an unknown tool lists the available ones and runs nothing', async () => {
    const tools = ToolRegistry.from([simpleTool('alpha', () => 'a'), simpleTool('beta', () => 'b')]);
    const outcome = await executeToolCall(tools, toolCall('c9', 'gamma', { x: 1 }), options());
    expect(outcome).toEqual({
      toolCallId: 'c9',
      name: 'gamma',
      content: 'Error: unknown tool "gamma". Available tools: alpha, beta',
      failed: true,
      errorCode: 'tool.not_found',
      durationMs: 0,
      args: null,
    });
    const none = await executeToolCall(ToolRegistry.from([]), toolCall('c9', 'gamma'), options());
    expect(none.content).toBe('Error: unknown tool "gamma". Available tools: (none)');
  });

  it('arguments that are not JSON are rejected without running the handler', async () => {
    let ran = false;
    const outcome = await runOne(simpleTool('write', () => (ran = true)), '{"path": "a.txt", "content": "half');
    expect(outcome).toMatchObject({ failed: true, errorCode: 'tool.invalid_args', args: null });
    expect(outcome.content).toMatch(/^Error: arguments are not valid JSON \(/);
    expect(ran).toBe(false);
  });

  it('arguments that are not an object are rejected', async () => {
    const outcome = await runOne(simpleTool('t', () => 'ran'), '[1]');
    expect(outcome).toMatchObject({ content: 'Error: arguments must be a JSON object, got an array', errorCode: 'tool.invalid_args' });
  });

  it('arguments that break the schema are rejected with the schema errors, keeping the parsed arguments', async () => {
    let ran = false;
    const parameters = { type: 'object', properties: { limit: { type: 'integer', maximum: 50 } }, required: ['query'] };
    const outcome = await runOne(simpleTool('search', () => (ran = true), { parameters }), { limit: 51 });
    expect(outcome).toMatchObject({
      content: `Error: invalid arguments for tool "search": must have required property 'query'; /limit must be <= 50`,
      failed: true,
      errorCode: 'tool.invalid_args',
      args: { limit: 51 },
    });
    expect(ran).toBe(false);
  });

  it('a handler that throws a CancelledError of its own, with the outer signal live, has failed', async () => {
    const outcome = await runOne(simpleTool('t', () => Promise.reject(new CancelledError('gave up'))));
    expect(outcome).toMatchObject({ content: 'Error: gave up', errorCode: 'tool.failed' });
  });
});

describe('executeToolCall: context and timeout', () => {
  it('gives the handler the session, call id, idempotency key and a live signal', async () => {
    let seen: ToolContext | undefined;
    let abortedDuringCall: boolean | undefined;
    await runOne(simpleTool('t', (_args: unknown, ctx: ToolContext) => {
      seen = ctx;
      abortedDuringCall = ctx.signal.aborted;
    }));
    expect(seen).toMatchObject({ sessionId: 'sess-1', toolCallId: 'call_1', idempotencyKey: 'sess-1:call_1' });
    expect(abortedDuringCall).toBe(false);
  });

  it('times out on the clock, aborts the handler signal and reports tool.timeout', async () => {
    const clock = new ManualClock();
    let signal: AbortSignal | undefined;
    const slow = simpleTool('slow', (_args: unknown, ctx: ToolContext) => {
      signal = ctx.signal;
      return untilAborted(ctx.signal);
    }, { timeoutMs: 1000 });
    const pending = runOne(slow, {}, options(clock));
    await clock.whenSleeping();
    expect(clock.pendingSleeps()).toEqual([1000]);
    clock.advance(999);
    expect(clock.pendingSleeps()).toEqual([1000]);
    expect(signal?.aborted).toBe(false);
    clock.advance(1);
    expect(await pending).toMatchObject({
      content: 'Error: tool "slow" timed out after 1000 ms',
      failed: true,
      errorCode: 'tool.timeout',
      durationMs: 1000,
      args: {},
    });
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBeInstanceOf(ToolTimeoutError);
  });

  it('returns on timeout even when the handler ignores its signal', async () => {
    const clock = new ManualClock();
    const pending = runOne(simpleTool('stuck', () => new Promise(() => undefined), { timeoutMs: 5 }), {}, options(clock));
    await clock.whenSleeping();
    clock.advance(5);
    expect((await pending).errorCode).toBe('tool.timeout');
  });

  it('uses a 60 s timeout when the definition sets none, and stops the timer when the handler ends', async () => {
    const clock = new ManualClock();
    let sleepsDuringCall: number[] = [];
    const pending = runOne(simpleTool('t', async () => {
      await clock.whenSleeping();
      sleepsDuringCall = clock.pendingSleeps();
      return 'done';
    }), {}, options(clock));
    expect((await pending).content).toBe('done');
    expect(sleepsDuringCall).toEqual([60_000]);
    expect(clock.pendingSleeps()).toEqual([]);
  });

  it('times out with the real clock too', async () => {
    const outcome = await runOne(simpleTool('slow', (_args: unknown, ctx: ToolContext) => untilAborted(ctx.signal), { timeoutMs: 30 }), {}, options(systemClock));
    expect(outcome).toMatchObject({ errorCode: 'tool.timeout', content: 'Error: tool "slow" timed out after 30 ms' });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(25);
  });
});

describe('executeToolCall: truncation', () => {
  const big = (length: number) => simpleTool('big', () => 'x'.repeat(length));

  it('keeps a result of exactly 50,000 characters whole', async () => {
    const outcome = await runOne(big(50_000));
    expect(outcome.content).toBe('x'.repeat(50_000));
  });

  it('truncates 50,001 characters to 49,950 plus a notice with the original length', async () => {
    const outcome = await runOne(big(50_001));
    expect(outcome.content).toBe(`${'x'.repeat(49_950)}\n... (truncated, 50001 total chars)`);
    expect(outcome.failed).toBe(false);
  });

  it('honours maxResultChars and truncates error messages too', async () => {
    const outcome = await runOne(simpleTool('t', () => {
      throw new Error('e'.repeat(500));
    }), {}, { ...options(), maxResultChars: 100 });
    expect(outcome.content).toBe(`Error: ${'e'.repeat(43)}\n... (truncated, 507 total chars)`);
  });

  it('never splits a surrogate pair', async () => {
    const outcome = await runOne(simpleTool('t', () => `${'a'.repeat(49)}😀${'b'.repeat(100)}`), {}, { ...options(), maxResultChars: 100 });
    expect(outcome.content).toBe(`${'a'.repeat(49)}\n... (truncated, 151 total chars)`);
  });
});

describe('executeToolCall: cancellation is not data', () => {
  it('rejects at once with CancelledError when the signal is already aborted, running nothing', async () => {
    const controller = new AbortController();
    controller.abort('user cancel');
    let ran = false;
    const pending = runOne(simpleTool('t', () => (ran = true)), {}, options(new ManualClock(), controller.signal));
    await expect(pending).rejects.toBeInstanceOf(CancelledError);
    await expect(pending).rejects.toThrow('user cancel');
    expect(ran).toBe(false);
  });

  it('rejects even when the call would fail before reaching a handler', async () => {
    const controller = new AbortController();
    controller.abort();
    const tools = ToolRegistry.from([simpleTool('t', () => 'ran')]);
    for (const call of [toolCall('c1', 'unknown'), toolCall('c2', 't', '{oops')]) {
      await expect(executeToolCall(tools, call, options(new ManualClock(), controller.signal))).rejects.toBeInstanceOf(CancelledError);
    }
  });

  it('rejects with the CancelledError that aborted the signal mid-call and aborts the handler signal', async () => {
    const controller = new AbortController();
    const reason = new CancelledError('shutdown');
    let handlerSignal: AbortSignal | undefined;
    const hanging = simpleTool('t', (_args: unknown, ctx: ToolContext) => {
      handlerSignal = ctx.signal;
      controller.abort(reason);
      return new Promise(() => undefined);
    });
    await expect(runOne(hanging, {}, options(new ManualClock(), controller.signal))).rejects.toBe(reason);
    expect(handlerSignal?.aborted).toBe(true);
    expect(handlerSignal?.reason).toBe(reason);
  });

  it('treats a handler failing because of the outer abort as a cancellation', async () => {
    const controller = new AbortController();
    const clock = new ManualClock();
    const pending = runOne(simpleTool('t', (_args: unknown, ctx: ToolContext) => untilAborted(ctx.signal)), {}, options(clock, controller.signal));
    await clock.whenSleeping();
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(CancelledError);
    expect(clock.pendingSleeps()).toEqual([]);
  });
});
