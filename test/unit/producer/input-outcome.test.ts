import { describe, expect, it } from 'vitest';
import type { InputRecord, InputResult } from '../../../src/core/session-types.js';
import type { StreamEvent } from '../../../src/fleet/fleet-events.js';
import { outcomeFromEvent, outcomeFromRecord } from '../../../src/producer/input-outcome.js';

const usage = { promptTokens: 10, completionTokens: 5, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 15, llmCalls: 1, costUsd: 0, costPicoUsd: 0 };
const result: InputResult = { status: 'completed', finalText: 'hi', rounds: 1, toolCalls: 0, usage };

function record(fields: Partial<InputRecord>): InputRecord {
  return {
    sessionId: 's1',
    seq: 1,
    inputId: 'i1',
    kind: 'send',
    mode: 'queue',
    payload: { input: 'x' },
    status: 'pending',
    attempts: 0,
    steeredInto: null,
    result: null,
    awaiting: null,
    errorCode: null,
    errorMessage: null,
    originJobId: null,
    acceptedAt: new Date(0),
    startedAt: null,
    finishedAt: null,
    ...fields,
  };
}

describe('outcomeFromRecord', () => {
  it('is null while the input is pending or running', () => {
    expect(outcomeFromRecord(record({ status: 'pending' }))).toBeNull();
    expect(outcomeFromRecord(record({ status: 'running' }))).toBeNull();
  });

  it('returns the stored result with the error, if any', () => {
    expect(outcomeFromRecord(record({ status: 'done', result }))).toEqual({ ...result, error: null });
    const failed = outcomeFromRecord(record({ status: 'failed', result: { ...result, status: 'failed' }, errorCode: 'llm.non_retryable', errorMessage: '401' }));
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'llm.non_retryable', message: '401' } });
  });

  it('fills a row that ended without a result from its status', () => {
    expect(outcomeFromRecord(record({ status: 'failed', errorCode: 'input.invalid', errorMessage: 'bad' }))).toEqual({
      status: 'failed',
      finalText: '',
      rounds: 0,
      toolCalls: 0,
      usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 0, llmCalls: 0, costUsd: 0, costPicoUsd: 0 },
      error: { code: 'input.invalid', message: 'bad' },
    });
    expect(outcomeFromRecord(record({ status: 'cancelled' }))?.status).toBe('cancelled');
  });

  it('waits for a steered input until its host finished, then reports the host outcome', () => {
    expect(outcomeFromRecord(record({ status: 'done', steeredInto: 3 }))).toBeNull();
    expect(outcomeFromRecord(record({ status: 'done', steeredInto: 3, result: { ...result, steeredInto: 3 } }))).toEqual({ ...result, error: null, steeredInto: 3 });
  });
});

describe('outcomeFromEvent', () => {
  const event = (data: Record<string, unknown>, type = 'input_finished'): StreamEvent => ({
    kind: 'event',
    id: '1-0',
    type,
    data: { sessionId: 's1', inputSeq: 1, seq: 9, ...data },
  });

  it('reads the outcome an input_finished event carries', () => {
    expect(outcomeFromEvent(event({ ...result, error: null }))).toEqual({ ...result, error: null });
    expect(outcomeFromEvent(event({ ...result, output: { a: 1 }, error: null, steeredInto: 2 }))).toEqual({ ...result, output: { a: 1 }, error: null, steeredInto: 2 });
  });

  it('is null for other events and malformed payloads', () => {
    expect(outcomeFromEvent(event({ ...result, error: null }, 'input_started'))).toBeNull();
    expect(outcomeFromEvent(event({ ...result, status: 'exploded', error: null }))).toBeNull();
    expect(outcomeFromEvent(event({ ...result }))).toBeNull();
  });
});
