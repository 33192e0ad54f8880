import { describe, expect, it } from 'vitest';
import type { CliIo } from '../../../src/cli/cli-io.js';
import { paint } from '../../../src/cli/colour.js';
import { formatDescription, type SessionDescription } from '../../../src/cli/commands/describe.js';
import * as limits from '../../../src/cli/limits.js';
import { MAX_ABORT_REASON_LENGTH, MAX_INTERACTION_ID_LENGTH } from '../../../src/core/input-payload.js';
import { MAX_TIMER_MS } from '../../../src/core/ports/clock.js';
import { MAX_TIMER_DELAY_DAYS, MAX_TIMER_DELAY_MS, MIN_TIMER_EVERY_MS } from '../../../src/fleet/timer-limits.js';

const io = (isTty: boolean, env: NodeJS.ProcessEnv = {}): CliIo => ({ stdout: () => {}, stderr: () => {}, env, isTty });
const ESC = '\u001b[';

describe('colour', () => {
  it('is used on a terminal only', () => {
    expect(paint(io(true)).red('x')).toContain(ESC);
    expect(paint(io(false)).red('x')).toBe('x');
    expect(paint({ stdout: () => {}, stderr: () => {}, env: {} }).red('x')).toBe('x');
  });

  it('is never used with NO_COLOR set (an empty value does not count)', () => {
    expect(paint(io(true, { NO_COLOR: '1' })).red('x')).toBe('x');
    expect(paint(io(true, { NO_COLOR: '' })).red('x')).toContain(ESC);
  });

  it('a command output has none off a terminal', () => {
    const description = {
      session: { id: 's', status: 'idle', agent: 'default', tenant: 't', lease: { owner: null, token: 0, expiresAt: null }, cancelRequestedAt: null, parentSessionId: null, createdAt: new Date(0), updatedAt: new Date(0) },
      stats: { inputs: { total: 1, pending: 0, running: 0, waiting: 0, done: 0, failed: 1, cancelled: 0 }, totals: { rounds: 1, llmCalls: 1, toolCalls: 0, totalTokens: 5, promptTokens: 3, completionTokens: 2, costUsd: 0 }, tree: { children: [] } },
      lastError: { seq: 1, code: 'llm.timeout', message: 'slow' },
    } as unknown as SessionDescription;
    expect(formatDescription(description, io(false))).not.toContain(ESC);
    expect(formatDescription(description, io(true, { NO_COLOR: 'yes' }))).not.toContain(ESC);
    expect(formatDescription(description, io(true))).toContain(ESC);
  });
});

describe("the help's copies of library limits", () => {
  it('match the library', () => {
    expect(limits.MAX_ABORT_REASON_LENGTH).toBe(MAX_ABORT_REASON_LENGTH);
    expect(limits.MAX_INTERACTION_ID_LENGTH).toBe(MAX_INTERACTION_ID_LENGTH);
    expect(limits.MAX_TIMER_DELAY_DAYS).toBe(MAX_TIMER_DELAY_DAYS);
    expect(limits.TIMER_IN.max).toBe(MAX_TIMER_DELAY_MS);
    expect(limits.TIMER_EVERY).toMatchObject({ min: MIN_TIMER_EVERY_MS, max: MAX_TIMER_DELAY_MS });
    expect(limits.MAX_TIMER_MS).toBe(MAX_TIMER_MS);
  });
});
