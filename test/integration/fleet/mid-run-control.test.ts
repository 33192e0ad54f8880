import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedLlm } from '../../../src/llm/scripted-llm.js';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { cancelChannel } from '../../../src/fleet/fleet-keys.js';
import type { InputMode } from '../../../src/core/session-types.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { heldReply, sessionEvents } from './fixtures/fleet-helpers.js';

/**
 * Inputs and control messages that reach a session while it runs, through the fleet (docs/fleet.md):
 * steer, interrupt, cancel (pub/sub with the durable flag), and a question answered later by another
 * worker (`request_user_input` → `waiting_for_input` → `resume` with `submit`).
 */
describe('steer, interrupt, cancel and resume through the fleet', () => {
  let fleet: FleetFixture;

  beforeAll(async () => {
    fleet = await FleetFixture.create('mid_run');
  });

  afterAll(async () => {
    await fleet?.close();
  });

  function send(sessionId: string, text: string, mode?: InputMode) {
    return acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: text }, ...(mode === undefined ? {} : { mode }) });
  }

  async function events(sessionId: string, type: string) {
    return (await sessionEvents(fleet.redis, fleet.config.queueName, sessionId)).filter((event) => event.type === type);
  }

  it('a steer input joins the running input at its next round boundary, once, and finishes with it', async () => {
    const sessionId = 'steer';
    const first = heldReply({ text: 'Working on X.' });
    const llm = new ScriptedLlm([first.step, { text: 'X and Y done.' }]);
    const worker = await fleet.startWorker({ llm });
    try {
      await send(sessionId, 'do X');
      await first.entered;
      const steer = await send(sessionId, 'also do Y', 'steer');
      first.release();
      const inputs = await fleet.waitForSessionFinished(sessionId, 2);
      expect(inputs[0]).toMatchObject({ status: 'done', result: { status: 'completed', finalText: 'X and Y done.', rounds: 2 } });
      expect(inputs[1]).toMatchObject({ seq: steer.seq, status: 'done', steeredInto: 1, result: { finalText: 'X and Y done.', steeredInto: 1 } });
      expect(await fleet.transcript(sessionId)).toEqual(['user: do X', 'assistant: Working on X.', 'user: <follow_up>\nalso do Y\n</follow_up>', 'assistant: X and Y done.']);
      expect((await events(sessionId, 'steer_applied')).map((event) => event.data.inputSeqs)).toEqual([[2]]);
      // One input_finished per input (I6): the steered one carries its host.
      expect((await events(sessionId, 'input_finished')).map((event) => [event.data.inputSeq, event.data.status, event.data.steeredInto ?? null])).toEqual([
        [1, 'completed', null],
        [2, 'completed', 1],
      ]);
      expect(llm.requests).toHaveLength(2);
    } finally {
      await worker.close();
    }
  });

  it('an interrupt input stops the running input at its next safe point as cancelled, keeping its work, then runs', async () => {
    const sessionId = 'interrupt';
    const first = heldReply({ toolCalls: [{ id: 'clock', name: 'current_time', arguments: {} }] });
    const llm = new ScriptedLlm([first.step, { text: 'Dealt with the urgent matter.' }]);
    const worker = await fleet.startWorker({ llm });
    try {
      await send(sessionId, 'a long task');
      await first.entered;
      await send(sessionId, 'urgent: stop that', 'interrupt');
      first.release();
      const inputs = await fleet.waitForSessionIdle(sessionId, 2);
      expect(inputs.map((input) => [input.status, input.result?.status])).toEqual([
        ['cancelled', 'cancelled'],
        ['done', 'completed'],
      ]);
      const transcript = await fleet.transcript(sessionId);
      // The tool round it finished is kept; the interrupting input follows it.
      expect(transcript[0]).toBe('user: a long task');
      expect(transcript.filter((line) => line.startsWith('tool: '))).toHaveLength(1);
      expect(transcript.slice(-2)).toEqual(['user: urgent: stop that', 'assistant: Dealt with the urgent matter.']);
      expect(llm.requests).toHaveLength(2);
    } finally {
      await worker.close();
    }
  });

  it('cancel (Redis PUBLISH on the cancel channel + the durable flag) aborts the in-flight LLM call at once; the session stays usable', async () => {
    const sessionId = 'cancel';
    const first = heldReply({ text: 'never said' });
    const llm = new ScriptedLlm([first.step], { whenExhausted: 'echo' });
    const worker = await fleet.startWorker({ llm });
    try {
      await send(sessionId, 'think for a very long time');
      await first.entered;
      await fleet.store.requestCancel(sessionId);
      const published = Date.now();
      expect(await fleet.redis.publish(cancelChannel(fleet.config.queueName), sessionId)).toBeGreaterThanOrEqual(1);
      const [input] = await fleet.waitForSessionFinished(sessionId, 1);
      const cancelMs = Date.now() - published;
      expect(input).toMatchObject({ status: 'cancelled', result: { status: 'cancelled' } });
      expect(await events(sessionId, 'loop_cancelled')).toHaveLength(1);
      expect(cancelMs).toBeLessThan(15_000);
      await send(sessionId, 'next');
      const inputs = await fleet.waitForSessionIdle(sessionId, 2);
      expect(inputs[1]).toMatchObject({ status: 'done', result: { status: 'completed', finalText: 'Echo: next' } });
      // The durable copy was consumed by the run that honoured it: it does not cancel the next input.
      expect((await fleet.store.getSession(sessionId))!.cancelRequestedAt).toBeNull();
    } finally {
      first.release();
      await worker.close();
    }
  });

  it('a cancel whose pub/sub message reached no worker is honoured from the durable flag when the input is taken over', async () => {
    const sessionId = 'cancel-durable';
    const first = heldReply({ text: 'never said' });
    const holder = await fleet.startWorker({ llm: new ScriptedLlm([first.step]) });
    await send(sessionId, 'long');
    await first.entered;
    // The request lands in Postgres only (the message was lost); the holder then stops without finishing.
    await fleet.store.requestCancel(sessionId);
    await holder.close({ force: true });
    const other = await fleet.startWorker({ llm: new ScriptedLlm([], { whenExhausted: 'echo' }) });
    try {
      const [input] = await fleet.waitForSessionFinished(sessionId, 1);
      expect(input).toMatchObject({ status: 'cancelled', attempts: 2 });
      expect((await events(sessionId, 'input_resumed')).map((event) => event.data.reason)).toEqual(['worker_lost']);
    } finally {
      await other.close();
    }
  });

  it('a cancel whose pub/sub message was lost still stops the running input: the holder re-reads the durable flag', async () => {
    const sessionId = 'cancel-flag-only';
    const first = heldReply({ text: 'never said' });
    const worker = await fleet.startWorker({ llm: new ScriptedLlm([first.step]) });
    try {
      await send(sessionId, 'long');
      await first.entered;
      // Only the durable copy: no PUBLISH reaches the worker, and the same worker keeps the lease.
      await fleet.store.requestCancel(sessionId);
      const [input] = await fleet.waitForSessionFinished(sessionId, 1);
      expect(input).toMatchObject({ status: 'cancelled', attempts: 1 });
    } finally {
      first.release();
      await worker.close();
    }
  });

  it('request_user_input ends the input waiting_for_input; a resume with submit, taken by another worker, continues the conversation', async () => {
    const sessionId = 'question';
    const asker = new ScriptedLlm([{ toolCalls: [{ id: 'ask1', name: 'request_user_input', arguments: { prompt: 'Which colour?' } }] }]);
    const first = await fleet.startWorker({ llm: asker });
    await send(sessionId, 'paint the fence');
    const [waiting] = await fleet.waitForSessionFinished(sessionId, 1);
    expect(waiting).toMatchObject({ status: 'done', result: { status: 'waiting_for_input' } });
    expect((await fleet.store.getSession(sessionId))!.status).toBe('waiting_for_input');
    expect((await events(sessionId, 'user_input_requested')).map((event) => event.data.interactionId)).toEqual(['ask1']);
    await first.close();
    // The answer comes later, and another worker takes it.
    const answerer = new ScriptedLlm([{ text: 'Painting it blue.' }]);
    const second = await fleet.startWorker({ llm: answerer });
    try {
      await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'resume', payload: { submit: { interactionId: 'ask1', value: 'blue' } } });
      const inputs = await fleet.waitForSessionIdle(sessionId, 2);
      expect(inputs[1]).toMatchObject({ kind: 'resume', status: 'done', result: { status: 'completed', finalText: 'Painting it blue.' } });
      expect(asker.requests).toHaveLength(1);
      expect(answerer.requests).toHaveLength(1);
      expect(answerer.requests[0]!.messages.at(-1)).toMatchObject({ role: 'tool', toolCallId: 'ask1', content: 'blue' });
      expect(await fleet.transcript(sessionId)).toEqual(['user: paint the fence', 'assistant: ', 'tool: blue', 'assistant: Painting it blue.']);
      expect((await fleet.store.getSession(sessionId))!.status).toBe('idle');
    } finally {
      await second.close();
    }
  });
});
