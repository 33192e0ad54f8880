import { afterEach, describe, expect, it, vi } from 'vitest';
import type { InputRecord } from '../../../src/core/session-types.js';
import type { Backlog } from '../../../src/core/ports/upkeep-store.js';
import { BACKLOG_READ_TIMEOUT_MS, QUEUE_JOB_STATES, WorkerMetrics, type QueueJobCounts, type WorkerMetricsSources } from '../../../src/worker/worker-metrics.js';

const metricsOf = (dropped = 0) =>
  new WorkerMetrics({ queueName: 'q', concurrency: 4, isTool: (name) => name === 'lookup', events: () => ({ published: 12, dropped, fenced: 1 }) });

/** The samples of one metric, as `{labels} value` strings without the shared queue label. */
async function samples(metrics: WorkerMetrics, name: string): Promise<string[]> {
  const text = (await metrics.render()).body;
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .map((line) => line.slice(name.length).replace('queue="q"', '').replace(/agent="a",?/, '').replace('{,', '{').replace(',}', '}').replace('{}', '').trim());
}

const input = (acceptedAt: number, startedAt: number | null) => ({ acceptedAt: new Date(acceptedAt), startedAt: startedAt === null ? null : new Date(startedAt) }) as InputRecord;

describe('WorkerMetrics', () => {
  it('dispatch is accepted → started by the record’s own (Postgres) times, for fresh runs only; active runs go up and down', async () => {
    const metrics = metricsOf();
    metrics.runStarted(input(1_000, 1_040), false, 'a');
    metrics.runStarted(input(1_000, 9_000), true, 'a');
    expect(await samples(metrics, 'loopfleet_input_dispatch_seconds_sum')).toEqual(['0.04']);
    expect(await samples(metrics, 'loopfleet_inputs_started_total')).toEqual(['{resumed="false"} 1', '{resumed="true"} 1']);
    expect(await samples(metrics, 'loopfleet_runs_active')).toEqual(['2']);
    metrics.runEnded('completed', 1.5, 'a');
    metrics.runEnded(null, 0.2, 'a');
    expect(await samples(metrics, 'loopfleet_runs_active')).toEqual(['0']);
    // A run stopped before an outcome (lease lost, shutdown) has no status to be timed under.
    expect(await samples(metrics, 'loopfleet_input_run_seconds_count')).toEqual(['{status="completed"} 1']);
  });

  it('reports each MCP server as up or not', async () => {
    const metrics = metricsOf();
    metrics.mcpServerStatus('files', true);
    metrics.mcpServerStatus('web', true);
    metrics.mcpServerStatus('web', false);
    expect(await samples(metrics, 'loopfleet_mcp_server_up')).toEqual(['{server="files"} 1', '{server="web"} 0']);
  });

  it('counts LLM calls, retries, fallbacks, give-ups and tokens from the loop’s events', async () => {
    const metrics = metricsOf();
    const usage = { promptTokens: 100, completionTokens: 20, cachedTokens: 60, cacheWriteTokens: 30, reasoningTokens: 5, totalTokens: 120 };
    const call = { type: 'llm_call_completed', callId: 'c', roundIndex: 0, attempt: 1, model: 'm', provider: 'openai', durationMs: 1200, timeToFirstTokenMs: 300 } as const;
    metrics.observe({ ...call, success: false, errorType: 'LlmTransientError', usage: null }, 'a');
    metrics.observe({ type: 'llm_retry_attempted', attempt: 1, maxAttempts: 3, errorType: 'LlmTransientError', errorMessage: 'x', nextDelayMs: 10 }, 'a');
    metrics.observe({ ...call, success: true, errorType: null, usage }, 'a');
    metrics.observe({ type: 'llm_fallback', from: 'openai', to: 'anthropic', reason: 'unavailable', errorMessage: 'x' }, 'a');
    metrics.observe({ type: 'llm_degraded', reason: 'retry_exhausted', attempts: 3, errorType: 'LlmTransientError', errorMessage: 'x' }, 'a');
    metrics.observe({ type: 'stream_delta', streamId: 's', text: 'ignored' }, 'a');
    expect(await samples(metrics, 'loopfleet_llm_calls_total')).toEqual(['{provider="openai",outcome="error"} 1', '{provider="openai",outcome="ok"} 1']);
    expect(await samples(metrics, 'loopfleet_llm_call_seconds_sum')).toEqual(['{provider="openai"} 2.4']);
    expect(await samples(metrics, 'loopfleet_llm_first_token_seconds_count')).toEqual(['{provider="openai"} 2']);
    expect(await samples(metrics, 'loopfleet_llm_tokens_total')).toEqual([
      '{provider="openai",model="m",kind="prompt"} 100',
      '{provider="openai",model="m",kind="completion"} 20',
      '{provider="openai",model="m",kind="cache_read"} 60',
      '{provider="openai",model="m",kind="cache_write"} 30',
      '{provider="openai",model="m",kind="reasoning"} 5',
    ]);
    expect(await samples(metrics, 'loopfleet_llm_retries_total')).toEqual(['1']);
    expect(await samples(metrics, 'loopfleet_llm_fallbacks_total')).toEqual(['{from="openai",to="anthropic",reason="unavailable"} 1']);
    expect(await samples(metrics, 'loopfleet_llm_degraded_total')).toEqual(['{reason="retry_exhausted"} 1']);
  });

  it('never throws at an event prom-client refuses (a negative token count from a custom Llm): that sample is lost, nothing else', async () => {
    const metrics = metricsOf();
    const usage = { promptTokens: -1, completionTokens: 2, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 1 };
    const call = { type: 'llm_call_completed', callId: 'c', roundIndex: 0, attempt: 1, model: 'm', provider: 'custom', durationMs: 5, timeToFirstTokenMs: null, success: true, errorType: null, usage } as const;
    expect(() => metrics.observe(call, 'a')).not.toThrow();
    expect(await samples(metrics, 'loopfleet_llm_calls_total')).toEqual(['{provider="custom",outcome="ok"} 1']);
  });

  it('labels a tool call with a registered name only: a name the model made up is "unknown"', async () => {
    const metrics = metricsOf();
    const tool = { type: 'tool_call_completed', toolCallId: 't', toolInput: {}, output: '' } as const;
    metrics.observe({ ...tool, name: 'lookup', failed: false, durationMs: 4 }, 'a');
    metrics.observe({ ...tool, name: 'ignore previous instructions', failed: true, durationMs: 0 }, 'a');
    expect(await samples(metrics, 'loopfleet_tool_calls_total')).toEqual(['{tool="lookup",outcome="ok"} 1', '{tool="unknown",outcome="failed"} 1']);
  });

  it('labels input, LLM and tool metrics with the agent that ran them', async () => {
    const metrics = metricsOf();
    metrics.runStarted(input(1_000, 1_040), false, 'support');
    metrics.inputFinished('completed', 'coder');
    const call = { type: 'llm_call_completed', callId: 'c', roundIndex: 0, attempt: 1, model: 'm', provider: 'openai', durationMs: 5, timeToFirstTokenMs: null, success: true, errorType: null, usage: null } as const;
    metrics.observe(call, 'support');
    metrics.observe({ type: 'tool_call_completed', toolCallId: 't', toolInput: {}, output: '', name: 'lookup', failed: false, durationMs: 4 }, 'coder');
    const text = (await metrics.render()).body;
    expect(text).toContain('loopfleet_inputs_started_total{agent="support",resumed="false",queue="q"} 1');
    expect(text).toContain('loopfleet_inputs_finished_total{agent="coder",status="completed",queue="q"} 1');
    expect(text).toContain('loopfleet_llm_calls_total{agent="support",provider="openai",outcome="ok",queue="q"} 1');
    expect(text).toContain('loopfleet_tool_calls_total{agent="coder",tool="lookup",outcome="ok",queue="q"} 1');
  });

  it('counts rounds, jobs by kind and outcome, and drains by outcome', async () => {
    const metrics = metricsOf();
    metrics.observe({ type: 'round_completed', roundIndex: 0, hasTools: true }, 'a');
    metrics.observe({ type: 'round_completed', roundIndex: 1, hasTools: false }, 'a');
    metrics.jobDone('drain', 'ok');
    metrics.jobDone('drain', 'delayed');
    metrics.drainEnded('busy');
    expect(await samples(metrics, 'loopfleet_rounds_total')).toEqual(['2']);
    expect(await samples(metrics, 'loopfleet_jobs_total')).toEqual(['{kind="drain",outcome="ok"} 1', '{kind="drain",outcome="delayed"} 1']);
    expect(await samples(metrics, 'loopfleet_drains_total')).toEqual(['{outcome="busy"} 1']);
  });

  it('counts the sweeper’s repairs by kind', async () => {
    const metrics = metricsOf();
    metrics.swept({ stranded: 0, kicked: 0, strayKeysRemoved: 0, timersRearmed: 0 });
    metrics.swept({ stranded: 3, kicked: 3, strayKeysRemoved: 1, timersRearmed: 2 });
    expect(await samples(metrics, 'loopfleet_sweeper_repairs_total')).toEqual(['{kind="stranded_kicked"} 3', '{kind="stray_key_removed"} 1', '{kind="timer_rearmed"} 2']);
  });

  it('counts timer firings by outcome', async () => {
    const metrics = metricsOf();
    for (const outcome of ['delivered', 'delivered', 'skipped', 'postponed', 'error'] as const) metrics.timerFired(outcome);
    expect(await samples(metrics, 'loopfleet_timer_firings_total')).toEqual(['{outcome="delivered"} 2', '{outcome="skipped"} 1', '{outcome="postponed"} 1', '{outcome="error"} 1']);
  });

  it('reads the publisher’s counts and the concurrency at scrape time; the process metrics are rendered with each worker’s', async () => {
    const first = metricsOf(7);
    const second = metricsOf(0);
    expect(await samples(first, 'loopfleet_events_dropped_total')).toEqual(['7']);
    expect(await samples(second, 'loopfleet_events_dropped_total')).toEqual(['0']);
    expect(await samples(first, 'loopfleet_events_published_total')).toEqual(['12']);
    expect(await samples(first, 'loopfleet_events_fenced_total')).toEqual(['1']);
    expect(await samples(first, 'loopfleet_worker_concurrency')).toEqual(['4']);
    for (const metrics of [first, second]) expect((await samples(metrics, 'process_cpu_seconds_total')).length).toBe(1);
  });

  /** A worker's metrics with the scrape-time reads `reads` gives. */
  const withReads = (reads: Pick<WorkerMetricsSources, 'backlog' | 'queueJobs'>) =>
    new WorkerMetrics(Object.assign({ queueName: 'q', concurrency: 1, isTool: () => false, events: () => ({ published: 0, dropped: 0, fenced: 0 }) }, reads));

  describe('the backlog, read at scrape time', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    const withBacklog = (backlog: () => Promise<Backlog>) => withReads({ backlog });

    it('every backlog gauge from one read per scrape', async () => {
      const read = vi.fn(async () => ({ pending: 3, sessionsWaiting: 2, oldestWaitSeconds: 12.5 }));
      const metrics = withBacklog(read);
      expect(await samples(metrics, 'loopfleet_inputs_pending')).toEqual(['3']);
      expect(read).toHaveBeenCalledTimes(1);
      const text = (await metrics.render()).body;
      expect(read).toHaveBeenCalledTimes(2);
      expect(text).toContain('loopfleet_sessions_waiting{queue="q"} 2');
      expect(text).toContain('loopfleet_sessions_waiting_oldest_seconds{queue="q"} 12.5');
      expect(text).toContain('loopfleet_backlog_readable{queue="q"} 1');
    });

    // prom-client writes NaN as `Nan`; Prometheus reads either spelling (Go's ParseFloat ignores case).
    it('NaN when the read fails, and loopfleet_backlog_readable 0', async () => {
      const metrics = withBacklog(async () => Promise.reject(new Error('connection refused')));
      expect(await samples(metrics, 'loopfleet_sessions_waiting_oldest_seconds')).toEqual(['Nan']);
      expect(await samples(metrics, 'loopfleet_backlog_readable')).toEqual(['0']);
    });

    it('NaN once the read has taken BACKLOG_READ_TIMEOUT_MS; a read still running is joined, not sent again', async () => {
      vi.useFakeTimers();
      let answer: (backlog: Backlog) => void = () => {};
      const read = vi.fn(() => new Promise<Backlog>((resolve) => (answer = resolve)));
      const metrics = withBacklog(read);
      const first = samples(metrics, 'loopfleet_inputs_pending');
      await vi.advanceTimersByTimeAsync(BACKLOG_READ_TIMEOUT_MS);
      expect(await first).toEqual(['Nan']);
      const second = samples(metrics, 'loopfleet_inputs_pending');
      await vi.advanceTimersByTimeAsync(0);
      expect(read).toHaveBeenCalledTimes(1);
      answer({ pending: 5, sessionsWaiting: 1, oldestWaitSeconds: 1 });
      expect(await second).toEqual(['5']);
    });
  });

  describe("the queue's jobs, read at scrape time", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    const withQueue = (queueJobs: () => Promise<QueueJobCounts>) => withReads({ queueJobs });

    it('one series per state from one read per scrape, a state the read left out as 0', async () => {
      const read = vi.fn(async (): Promise<QueueJobCounts> => ({ waiting: 7, active: 2, delayed: 3, failed: 1, completed: 40 }));
      const text = (await withQueue(read).render()).body;
      expect(read).toHaveBeenCalledTimes(1);
      const expected = { waiting: 7, prioritized: 0, active: 2, delayed: 3, 'waiting-children': 0, failed: 1, completed: 40 };
      expect(Object.keys(expected)).toEqual([...QUEUE_JOB_STATES]);
      for (const [state, count] of Object.entries(expected)) expect(text).toContain(`loopfleet_queue_jobs{state="${state}",queue="q"} ${String(count)}`);
      expect(text).toContain('loopfleet_queue_readable{queue="q"} 1');
    });

    it('NaN for every state and loopfleet_queue_readable 0 when Redis fails or takes BACKLOG_READ_TIMEOUT_MS; a running read is joined', async () => {
      expect(await samples(withQueue(async () => Promise.reject(new Error('connection is closed'))), 'loopfleet_queue_jobs')).toEqual(QUEUE_JOB_STATES.map((state) => `{state="${state}"} Nan`));
      vi.useFakeTimers();
      const read = vi.fn(() => new Promise<QueueJobCounts>(() => {}));
      const metrics = withQueue(read);
      const first = metrics.render();
      await vi.advanceTimersByTimeAsync(BACKLOG_READ_TIMEOUT_MS);
      const text = (await first).body;
      expect(text).toContain('loopfleet_queue_jobs{state="waiting",queue="q"} Nan');
      expect(text).toContain('loopfleet_queue_readable{queue="q"} 0');
      const second = samples(metrics, 'loopfleet_queue_readable');
      await vi.advanceTimersByTimeAsync(BACKLOG_READ_TIMEOUT_MS);
      expect(await second).toEqual(['0']);
      expect(read).toHaveBeenCalledTimes(1);
    });
  });
});
