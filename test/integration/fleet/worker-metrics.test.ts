import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedLlm } from '../../../src/llm/scripted-llm.js';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { readBacklog } from '../../../src/store/upkeep/read-backlog.js';
import type { RunningWorker } from '../../../src/worker/start-worker.js';
import { QUEUE_JOB_STATES } from '../../../src/worker/worker-metrics.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { metricSample as sample } from './fixtures/fleet-helpers.js';

/**
 * A worker's `/metrics` after real inputs through the fleet: a tool call (a registered tool and one
 * the model made up) and a plain answer, against real Postgres and Redis.
 */
describe('a worker’s /metrics', () => {
  let fleet: FleetFixture;
  let worker: RunningWorker;

  beforeAll(async () => {
    fleet = await FleetFixture.create('metrics');
    const llm = new ScriptedLlm(
      [
        { toolCalls: [{ id: 't1', name: 'current_time' }, { id: 't2', name: 'made_up_tool' }], usage: { promptTokens: 30, completionTokens: 5 } },
        { text: 'It is late.', usage: { promptTokens: 50, completionTokens: 4 } },
      ],
      { whenExhausted: 'echo' },
    );
    worker = await fleet.startWorker({ llm, healthServer: true });
  });

  afterAll(async () => {
    await fleet?.close();
  });

  it('counts inputs, runs, dispatch, LLM calls, tokens and tool calls, with bounded labels', async () => {
    const queue = { queue: fleet.config.queueName };
    for (const input of ['what time is it?', 'thanks']) await acceptAndKick(fleet.acceptDeps, { sessionId: 'metrics-1', kind: 'send', payload: { input } });
    await fleet.waitForSessionIdle('metrics-1', 2);
    const url = `http://127.0.0.1:${String(worker.healthPort)}/metrics`;
    // The runs are counted as they end, just after their outcome is committed, and their drain and its
    // job once the drain has released the session after them: wait for all of it.
    const text = await fleet.waitFor('both runs and their drain counted as ended', async () => {
      const response = await fetch(url);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const body = await response.text();
      const ended =
        sample(body, 'loopfleet_input_run_seconds_count', { ...queue, status: 'completed' }) === 2 &&
        (sample(body, 'loopfleet_drains_total', { ...queue, outcome: 'drained' }) ?? 0) >= 1 &&
        (sample(body, 'loopfleet_jobs_total', { ...queue, kind: 'drain', outcome: 'ok' }) ?? 0) >= 1;
      return ended ? body : undefined;
    });
    expect(sample(text, 'loopfleet_inputs_started_total', { ...queue, resumed: 'false' })).toBe(2);
    expect(sample(text, 'loopfleet_inputs_finished_total', { ...queue, status: 'completed' })).toBe(2);
    expect(sample(text, 'loopfleet_runs_active', queue)).toBe(0);
    expect(sample(text, 'loopfleet_input_dispatch_seconds_count', queue)).toBe(2);
    expect(sample(text, 'loopfleet_input_run_seconds_count', { ...queue, status: 'completed' })).toBe(2);
    expect(sample(text, 'loopfleet_llm_calls_total', { ...queue, provider: 'scripted', outcome: 'ok' })).toBe(3);
    expect(sample(text, 'loopfleet_llm_tokens_total', { ...queue, provider: 'scripted', kind: 'prompt' })).toBeGreaterThanOrEqual(80);
    expect(sample(text, 'loopfleet_tool_calls_total', { ...queue, tool: 'current_time', outcome: 'ok' })).toBe(1);
    expect(sample(text, 'loopfleet_tool_calls_total', { ...queue, tool: 'unknown', outcome: 'failed' })).toBe(1);
    expect(text).not.toContain('made_up_tool');
    expect(sample(text, 'loopfleet_worker_concurrency', queue)).toBe(fleet.config.worker.concurrency);
    expect(sample(text, 'loopfleet_events_dropped_total', queue)).toBe(0);
    expect(sample(text, 'loopfleet_events_published_total', queue)).toBeGreaterThan(10);
    expect(sample(text, 'loopfleet_rounds_total', queue)).toBe(3);
    expect(sample(text, 'loopfleet_drains_total', { ...queue, outcome: 'drained' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'loopfleet_jobs_total', { ...queue, kind: 'drain', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'process_cpu_seconds_total', {})).toBeGreaterThan(0);
    expect(sample(text, 'loopfleet_inputs_pending', queue)).toBe(0);
    expect(sample(text, 'loopfleet_sessions_waiting', queue)).toBe(0);
    expect(sample(text, 'loopfleet_sessions_waiting_oldest_seconds', queue)).toBe(0);
    expect(sample(text, 'loopfleet_backlog_readable', queue)).toBe(1);
    expect(sample(text, 'loopfleet_queue_readable', queue)).toBe(1);
    expect(sample(text, 'loopfleet_queue_jobs', { ...queue, state: 'waiting' })).toBe(0);
  });

  it("reports the queue's BullMQ jobs by state, as Redis holds them", async () => {
    const queue = { queue: fleet.config.queueName };
    const url = `http://127.0.0.1:${String(worker.healthPort)}/metrics`;
    // A raw send with no input is rejected for good (kept as failed); a job an hour out waits as delayed.
    await fleet.queue.add('send', { sessionId: 'metrics-2' });
    await fleet.queue.add('send', { sessionId: 'metrics-3', input: 'later' }, { delay: 3_600_000 });
    // A sweep may move the sweeper's next iteration between the scrape and BullMQ's own count: poll until they agree.
    const seen = await fleet.waitFor('the scrape to match what BullMQ counts, with the rejected job as failed', async () => {
      const body = await (await fetch(url)).text();
      const counts = await fleet.queue.getJobCounts(...QUEUE_JOB_STATES);
      const scraped = Object.fromEntries(QUEUE_JOB_STATES.map((state) => [state, sample(body, 'loopfleet_queue_jobs', { ...queue, state })]));
      return counts.failed === 1 && QUEUE_JOB_STATES.every((state) => scraped[state] === counts[state]) ? { body, counts } : undefined;
    });
    // The sweeper's schedule keeps its next iteration delayed too.
    expect(seen.counts.delayed).toBeGreaterThanOrEqual(2);
    expect(sample(seen.body, 'loopfleet_queue_readable', queue)).toBe(1);
  });
});

/** The backlog read behind `loopfleet_inputs_pending`, against real Postgres, with no worker to start anything. */
describe('readBacklog', () => {
  let fleet: FleetFixture;

  beforeAll(async () => {
    fleet = await FleetFixture.create('backlog');
  });

  afterAll(async () => {
    await fleet?.close();
  });

  it('counts every pending input, and the sessions a worker could start now with the oldest one’s wait, by Postgres time', async () => {
    expect(await readBacklog(fleet.pool)).toEqual({ pending: 0, sessionsWaiting: 0, oldestWaitSeconds: 0 });
    const accept = async (sessionId: string, agoSeconds: number) => {
      const { seq } = await fleet.store.acceptInput({ sessionId, kind: 'send', payload: { input: 'waiting' }, maxBytes: fleet.config.worker.maxInputBytes });
      await fleet.pool.query("UPDATE session_inputs SET accepted_at = now() - make_interval(secs => $3) WHERE session_id = $1 AND seq = $2", [sessionId, seq, agoSeconds]);
      return seq;
    };
    // Session a: its first input is running for long; the two queued behind it wait for it, not for a worker.
    const running = await accept('backlog-a', 600);
    await accept('backlog-a', 500);
    await accept('backlog-a', 400);
    await fleet.pool.query("UPDATE session_inputs SET status = 'running', started_at = now() WHERE session_id = 'backlog-a' AND seq = $1", [running]);
    // Session b: two queued, nothing running: one session a worker could start, waiting 90 s.
    await accept('backlog-b', 90);
    await accept('backlog-b', 30);
    const backlog = await readBacklog(fleet.pool);
    expect(backlog).toMatchObject({ pending: 4, sessionsWaiting: 1 });
    expect(backlog.oldestWaitSeconds).toBeGreaterThanOrEqual(90);
    expect(backlog.oldestWaitSeconds).toBeLessThan(400);
    await fleet.pool.query("UPDATE session_inputs SET status = 'cancelled', finished_at = now() WHERE session_id = 'backlog-b'");
    expect(await readBacklog(fleet.pool)).toEqual({ pending: 2, sessionsWaiting: 0, oldestWaitSeconds: 0 });
  });

  it("counts only its queue's sessions (and those from before queues were recorded) when given a queue", async () => {
    await fleet.pool.query("UPDATE session_inputs SET status = 'cancelled', finished_at = now() WHERE status IN ('pending', 'running')");
    const accept = (sessionId: string) => fleet.store.acceptInput({ sessionId, kind: 'send', payload: { input: 'waiting' }, maxBytes: fleet.config.worker.maxInputBytes });
    await accept('backlog-q1');
    await accept('backlog-q2');
    await accept('backlog-q2');
    await accept('backlog-legacy');
    await fleet.pool.query("UPDATE sessions SET queue = CASE id WHEN 'backlog-q1' THEN 'q1' WHEN 'backlog-q2' THEN 'q2' ELSE '' END WHERE id IN ('backlog-q1', 'backlog-q2', 'backlog-legacy')");
    expect(await readBacklog(fleet.pool, 'q1')).toMatchObject({ pending: 2, sessionsWaiting: 2 });
    expect(await readBacklog(fleet.pool, 'q2')).toMatchObject({ pending: 3, sessionsWaiting: 2 });
    expect(await readBacklog(fleet.pool)).toMatchObject({ pending: 4, sessionsWaiting: 3 });
  });
});
