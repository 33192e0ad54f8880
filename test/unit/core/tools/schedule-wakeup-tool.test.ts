import { describe, expect, it } from 'vitest';
import type { AgentTimer, TimerPort } from '../../../../src/core/ports/timers.js';
import { scheduleWakeupTool, ToolRegistry } from '../../../../src/core/tools/index.js';
import type { ToolContext } from '../../../../src/core/tools/tool-types.js';

/** An in-memory timer port: what the tool asked for, timers kept by (session, id) as the store keeps them. */
function memoryTimers() {
  const rows = new Map<string, AgentTimer & { sessionId: string }>();
  const port: TimerPort = {
    schedule: async ({ sessionId, timerId, delayMs, note, everyMs }) => {
      const key = `${sessionId}/${timerId}`;
      const existing = rows.get(key);
      if (existing !== undefined) return existing;
      const row = { sessionId, timerId, dueAt: new Date(Date.UTC(2026, 0, 1) + delayMs), note, everyMs: everyMs ?? null, status: 'armed' as const, fireCount: 0 };
      rows.set(key, row);
      return row;
    },
    list: async (sessionId) => [...rows.values()].filter((row) => row.sessionId === sessionId && row.status === 'armed'),
    cancel: async (sessionId, timerId) => {
      const row = rows.get(`${sessionId}/${timerId}`);
      if (row?.status !== 'armed') return false;
      rows.set(`${sessionId}/${timerId}`, Object.assign({}, row, { status: 'cancelled' as const }));
      return true;
    },
  };
  return { port, rows };
}

function context(toolCallId: string, sessionId = 's1'): ToolContext {
  return { sessionId, toolCallId, idempotencyKey: `${sessionId}:${toolCallId}`, signal: new AbortController().signal };
}

describe('schedule_wakeup', () => {
  it('schedules on the calling session under an id derived from the call: a call run again schedules nothing new', async () => {
    const { port, rows } = memoryTimers();
    const tool = scheduleWakeupTool(port);
    const first = await tool.execute({ action: 'schedule', delay_seconds: 1.5, note: 'check', every_seconds: 60 }, context('call_1'));
    expect(first).toEqual({ timer_id: 'wake-call_1', status: 'armed', due_at: '2026-01-01T00:00:01.500Z', every_seconds: 60, fire_count: 0, note: 'check' });
    expect(await tool.execute({ action: 'schedule', delay_seconds: 99, note: 'other' }, context('call_1'))).toEqual(first);
    expect(rows.size).toBe(1);
    // An id outside the timer-id alphabet is hashed, deterministically.
    const odd = (await tool.execute({ action: 'schedule', delay_seconds: 0, note: 'n' }, context('call #2'))) as { timer_id: string };
    expect(odd.timer_id).toMatch(/^wake-[0-9a-f]{32}$/);
    expect(((await tool.execute({ action: 'schedule', delay_seconds: 0, note: 'n' }, context('call #2'))) as { timer_id: string }).timer_id).toBe(odd.timer_id);
  });

  it('lists the session’s armed timers and cancels one', async () => {
    const { port } = memoryTimers();
    const tool = scheduleWakeupTool(port);
    await tool.execute({ action: 'schedule', delay_seconds: 0, note: 'a' }, context('c1'));
    await tool.execute({ action: 'schedule', delay_seconds: 0, note: 'elsewhere' }, context('c2', 's2'));
    expect(await tool.execute({ action: 'list' }, context('c3'))).toEqual({ timers: [expect.objectContaining({ timer_id: 'wake-c1', note: 'a' })] });
    expect(await tool.execute({ action: 'cancel', timer_id: 'wake-c1' }, context('c4'))).toEqual({ timer_id: 'wake-c1', cancelled: true });
    expect(await tool.execute({ action: 'cancel', timer_id: 'wake-c1' }, context('c5'))).toEqual({ timer_id: 'wake-c1', cancelled: false });
    expect(await tool.execute({ action: 'list' }, context('c6'))).toEqual({ timers: [] });
  });

  it('a schedule without its delay or note, or a cancel without its id, fails as tool.failed', async () => {
    const tool = scheduleWakeupTool(memoryTimers().port);
    await expect(Promise.resolve().then(() => tool.execute({ action: 'schedule', note: 'n' }, context('c')))).rejects.toMatchObject({ code: 'tool.failed' });
    await expect(Promise.resolve().then(() => tool.execute({ action: 'schedule', delay_seconds: 1, note: '  ' }, context('c')))).rejects.toMatchObject({ code: 'tool.failed' });
    await expect(Promise.resolve().then(() => tool.execute({ action: 'cancel' }, context('c')))).rejects.toMatchObject({ code: 'tool.failed' });
  });

  it('is a valid tool definition', () => {
    expect(ToolRegistry.from([scheduleWakeupTool(memoryTimers().port)]).names()).toEqual(['schedule_wakeup']);
  });
});
