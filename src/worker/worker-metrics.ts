/**
 * The worker's Prometheus metrics (`/metrics` on `METRICS_PORT`; docs/fleet.md, "Metrics").
 *
 * Everything is counted in this process, from what it already does: the runs it starts and finishes
 * and the events its loop emits (LLM calls, tool calls, retries, fallbacks, tokens), at a branch per
 * event on the hot path. The exceptions are the fleet's backlog, read from Postgres, and the queue's
 * BullMQ job counts, read from Redis, both at scrape time with a bound, so a scrape never waits long
 * on them.
 * Each worker has its own registry (several may share a process in tests); the process metrics
 * (CPU, memory, event-loop lag, GC: prom-client's defaults) are collected once per process and
 * rendered with every worker's. Prometheus adds the `instance` label per worker, and dashboards sum
 * over them.
 *
 * Label values are bounded by construction: statuses, outcomes and reasons are enums, `provider` and
 * `model` are the configured adapters' (as the provider names the model it served), a job's `kind`
 * is one the worker handles or `other`, and `tool` is a registered tool's name — a name the model
 * made up is counted as `unknown`, so a model cannot grow the series without bound. Never a session.
 */
import type { JobState } from 'bullmq';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { InputRecord, RunOutcome } from '../core/session-types.js';
import { attemptWithin } from '../fleet/settle-within.js';
import type { FleetEvent } from '../fleet/fleet-events.js';
import type { Backlog } from '../core/ports/upkeep-store.js';
import type { SweepReport } from './sweep-job.js';

/** What {@link WorkerMetrics} reads at scrape time. */
export interface WorkerMetricsSources {
  queueName: string;
  /** `WORKER_CONCURRENCY`: drains this worker runs at once. */
  concurrency: number;
  /** Whether a tool of this name is registered (its name becomes a label value). */
  isTool(name: string): boolean;
  /**
   * `METRICS_TENANT_LABEL`: add a `tenant` label to the token and cost counters. Default false: one
   * series per tenant × agent × model is a cardinality risk with many tenants (docs/prices.md).
   */
  tenantLabel?: boolean;
  /** The event publisher's counts since start: written, given up on (a hole each), refused by the deletion fence. */
  events(): { published: number; dropped: number; fenced: number };
  /** The fleet's backlog, read from Postgres at scrape time (bounded: {@link BACKLOG_READ_TIMEOUT_MS}). */
  backlog?(): Promise<Backlog>;
  /** The queue's BullMQ jobs by state, read from Redis at scrape time (bounded the same way). */
  queueJobs?(): Promise<QueueJobCounts>;
}

/** Longest a scrape waits for the backlog read, or the queue's; past it, or when the read fails, its gauges are NaN (unknown). */
export const BACKLOG_READ_TIMEOUT_MS = 2_000;

/** The BullMQ job states `loopfleet_queue_jobs` reports, each as its `state` label. */
export const QUEUE_JOB_STATES = ['waiting', 'prioritized', 'active', 'delayed', 'waiting-children', 'failed', 'completed'] as const satisfies readonly JobState[];

export type QueueJobCounts = Partial<Record<(typeof QUEUE_JOB_STATES)[number], number>>;

/**
 * How a job ended: `delayed` (a busy lease), `retry` (a raw input not ingested, Postgres failing),
 * `ordered` (a raw input waiting for its session's earlier ones), `rejected` (bad data), `error`.
 */
export type JobOutcome = 'ok' | 'delayed' | 'retry' | 'ordered' | 'rejected' | 'error';

/** prom-client's process metrics, started once per process: each start adds its own GC observer. */
let processRegistry: Registry | null = null;

/**
 * How often the event-loop delay (`nodejs_eventloop_lag_*`) is sampled, in milliseconds. prom-client's
 * 10 ms wakes an idle worker 100 times a second, which doubled its CPU (1.4–1.5 % of a core against
 * 0.8 %, bench/history/log-to-session-30.md, item 66); a stall still shows in the next sample at this resolution.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

export function processMetrics(): Registry {
  if (processRegistry === null) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }
  return processRegistry;
}

const SECONDS = { dispatch: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], run: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600] };
const LLM_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120];
const TOOL_SECONDS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60];

/** One worker's metrics. */
export class WorkerMetrics {
  readonly registry = new Registry();
  readonly #process = processMetrics();
  readonly #isTool: (name: string) => boolean;
  readonly #inputsStarted: Counter<'agent' | 'resumed'>;
  readonly #inputsFinished: Counter<'agent' | 'status'>;
  readonly #dispatch: Histogram;
  readonly #run: Histogram<'agent' | 'status'>;
  readonly #active: Gauge;
  readonly #llmCalls: Counter<'agent' | 'provider' | 'outcome'>;
  readonly #llmSeconds: Histogram<'agent' | 'provider'>;
  readonly #firstToken: Histogram<'agent' | 'provider'>;
  readonly #tokens: Counter<string>;
  readonly #cost: Counter<string>;
  readonly #tenantLabel: boolean;
  readonly #rounds: Counter<'agent'>;
  readonly #jobs: Counter<'kind' | 'outcome'>;
  readonly #drains: Counter<'outcome'>;
  readonly #repairs: Counter<'kind'>;
  readonly #timerFirings: Counter<'outcome'>;
  readonly #retries: Counter<'agent'>;
  readonly #fallbacks: Counter<'agent' | 'from' | 'to' | 'reason'>;
  readonly #degraded: Counter<'agent' | 'reason'>;
  readonly #toolCalls: Counter<'agent' | 'tool' | 'outcome'>;
  readonly #subagents: Counter<'agent' | 'event' | 'status'>;
  readonly #toolSeconds: Histogram<'agent' | 'tool'>;
  readonly #mcpServerUp: Gauge<'server'>;

  constructor(sources: WorkerMetricsSources) {
    const registers = [this.registry];
    this.registry.setDefaultLabels({ queue: sources.queueName });
    this.#isTool = sources.isTool;
    new Gauge({ name: 'loopfleet_worker_concurrency', help: 'Drains this worker runs at once (WORKER_CONCURRENCY).', registers }).set(sources.concurrency);
    this.#active = new Gauge({ name: 'loopfleet_runs_active', help: 'Inputs this worker is running now.', registers });
    this.#inputsStarted = new Counter({ name: 'loopfleet_inputs_started_total', help: 'Inputs started; resumed="true" continues one a lost worker was running.', labelNames: ['agent', 'resumed'], registers });
    this.#inputsFinished = new Counter({
      name: 'loopfleet_inputs_finished_total',
      help: 'Inputs finished, by outcome status; a steered input counts with the run it joined.',
      labelNames: ['agent', 'status'],
      registers,
    });
    this.#dispatch = new Histogram({ name: 'loopfleet_input_dispatch_seconds', help: 'From an input accepted (committed) to its run started, by Postgres time.', buckets: SECONDS.dispatch, registers });
    this.#run = new Histogram({ name: 'loopfleet_input_run_seconds', help: 'One run of an input, started to finished, by agent and outcome status.', labelNames: ['agent', 'status'], buckets: SECONDS.run, registers });
    this.#llmCalls = new Counter({ name: 'loopfleet_llm_calls_total', help: 'LLM call attempts, by provider and outcome (ok, error).', labelNames: ['agent', 'provider', 'outcome'], registers });
    this.#llmSeconds = new Histogram({ name: 'loopfleet_llm_call_seconds', help: 'One LLM call attempt, request to end of stream.', labelNames: ['agent', 'provider'], buckets: LLM_SECONDS, registers });
    this.#firstToken = new Histogram({ name: 'loopfleet_llm_first_token_seconds', help: 'Request to the first streamed token of an LLM call.', labelNames: ['agent', 'provider'], buckets: LLM_SECONDS, registers });
    this.#tenantLabel = sources.tenantLabel === true;
    const usageLabels = this.#tenantLabel ? ['agent', 'provider', 'model', 'tenant'] : ['agent', 'provider', 'model'];
    this.#tokens = new Counter({
      name: 'loopfleet_llm_tokens_total',
      help: 'Tokens, by kind: prompt, completion, cache_read and cache_write (of prompt), reasoning (of completion); model as the provider named it.',
      labelNames: [...usageLabels, 'kind'],
      registers,
    });
    this.#cost = new Counter({
      name: 'loopfleet_llm_cost_usd_total',
      help: "What LLM calls cost in USD at the worker's prices (LOOPFLEET_PRICES); calls of a model with no price add nothing.",
      labelNames: usageLabels,
      registers,
    });
    this.#rounds = new Counter({ name: 'loopfleet_rounds_total', help: 'Loop rounds completed (one model turn and its tool calls).', labelNames: ['agent'], registers });
    this.#jobs = new Counter({ name: 'loopfleet_jobs_total', help: 'BullMQ jobs processed, by kind (drain, send, resume, timer, sweep, other) and outcome (ok, delayed, retry, rejected, error).', labelNames: ['kind', 'outcome'], registers });
    this.#drains = new Counter({
      name: 'loopfleet_drains_total',
      help: 'Drains of a session, by outcome: drained, yielded (fairness), busy (another worker holds the lease), lease_lost, handed_back (shutdown), no_session, parked (its tenant runs as many inputs as its cap allows), error (it threw).',
      labelNames: ['outcome'],
      registers,
    });
    this.#repairs = new Counter({
      name: 'loopfleet_sweeper_repairs_total',
      help: 'What the sweeper repaired: stranded sessions (open inputs, no live lease) it kicked, stranded sessions of a tenant at its cap it parked instead (capped_parked), stray deduplication keys it removed, and overdue timers whose lost alarm it set again.',
      labelNames: ['kind'],
      registers,
    });
    this.#timerFirings = new Counter({
      name: 'loopfleet_timer_firings_total',
      help: 'Timer firings this worker handled, by outcome as timer_fired announced it: delivered, skipped, cancelled or postponed (by the timer.fire hook), error (refused by the inbox, or the hook failed).',
      labelNames: ['outcome'],
      registers,
    });
    this.#retries = new Counter({ name: 'loopfleet_llm_retries_total', help: 'LLM call attempts retried after a retryable failure.', labelNames: ['agent'], registers });
    this.#fallbacks = new Counter({ name: 'loopfleet_llm_fallbacks_total', help: 'Calls a fallback provider took over.', labelNames: ['agent', 'from', 'to', 'reason'], registers });
    this.#degraded = new Counter({ name: 'loopfleet_llm_degraded_total', help: 'Calls given up on: the input ends degraded.', labelNames: ['agent', 'reason'], registers });
    this.#subagents = new Counter({
      name: 'loopfleet_subagents_total',
      help: 'Child sessions this agent started (event started) and child results it took (event finished, by the status the child ended with).',
      labelNames: ['agent', 'event', 'status'],
      registers,
    });
    this.#toolCalls = new Counter({ name: 'loopfleet_tool_calls_total', help: 'Tool calls, by tool (unknown: a name not registered) and outcome (ok, failed).', labelNames: ['agent', 'tool', 'outcome'], registers });
    this.#toolSeconds = new Histogram({ name: 'loopfleet_tool_call_seconds', help: 'One tool call.', labelNames: ['agent', 'tool'], buckets: TOOL_SECONDS, registers });
    this.#mcpServerUp = new Gauge({ name: 'loopfleet_mcp_server_up', help: '1 while an MCP server is connected; 0 while it starts, restarts, or is absent (an optional server that could not start).', labelNames: ['server'], registers });
    const events = sources.events;
    const publisher: [name: string, help: string, count: keyof ReturnType<typeof events>][] = [
      ['loopfleet_events_published_total', 'Events written to the sessions\' Redis streams.', 'published'],
      ['loopfleet_events_dropped_total', 'Events the publisher gave up on (each leaves a seq hole: a gap for subscribers).', 'dropped'],
      ['loopfleet_events_fenced_total', 'Events of a session deleted while this worker ran it, refused by the deletion fence.', 'fenced'],
    ];
    const backlog = sources.backlog;
    if (backlog !== undefined) this.#backlogGauges(backlog, registers);
    const queueJobs = sources.queueJobs;
    if (queueJobs !== undefined) this.#queueGauges(queueJobs, registers);
    for (const [name, help, count] of publisher) {
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(events()[count]);
        },
      });
    }
  }

  /**
   * The backlog gauges, read at scrape time: they share one read, a read still running is joined
   * rather than sent again (a slow Postgres must not pile reads up in the pool), and a scrape waits
   * for it at most {@link BACKLOG_READ_TIMEOUT_MS}; then, or when it fails, they read NaN and
   * `loopfleet_backlog_readable` 0 (so an alert on the wait does not just go quiet in an outage).
   * Every worker reports the same fleet-wide figures: take `max` over instances.
   */
  #backlogGauges(read: () => Promise<Backlog>, registers: Registry[]): void {
    // A scrape collects every metric at once, so the gauges all join the first one's read.
    const current = sharedBoundedRead(read);
    const gauges: [name: string, help: string, value: (backlog: Backlog | null) => number][] = [
      ['loopfleet_inputs_pending', 'Inputs accepted and not started yet, fleet-wide (every worker reports it: take max). NaN when Postgres did not answer.', (b) => b?.pending ?? Number.NaN],
      [
        'loopfleet_sessions_waiting',
        'Sessions whose next input a worker could start now (nothing of theirs runs), fleet-wide: take max. NaN when Postgres did not answer.',
        (b) => b?.sessionsWaiting ?? Number.NaN,
      ],
      [
        'loopfleet_sessions_waiting_oldest_seconds',
        'How long the oldest input a worker could start now has waited, fleet-wide, by Postgres time (0 when none): take max. NaN when Postgres did not answer.',
        (b) => b?.oldestWaitSeconds ?? Number.NaN,
      ],
      ['loopfleet_backlog_readable', '1 when this scrape read the backlog from Postgres, 0 when the read failed or took over 2 s.', (b) => (b === null ? 0 : 1)],
    ];
    for (const [name, help, value] of gauges) {
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          this.set(value(await current()));
        },
      });
    }
  }

  /**
   * The queue's BullMQ jobs by state (`loopfleet_queue_jobs{state}`), read from Redis at scrape time
   * like the backlog: one shared, joined, bounded read; NaN and `loopfleet_queue_readable` 0 when
   * Redis did not answer. `waiting` and `prioritized` are jobs no worker has taken yet (kicks and raw
   * inputs: a growing figure means the fleet is short of drains), `delayed` the ones set for later
   * (timers' alarms, busy-lease retries, raw inputs retried), `failed` the ones kept after failing
   * for good (rejected job data). Every worker reports the same queue: take `max`.
   */
  #queueGauges(read: () => Promise<QueueJobCounts>, registers: Registry[]): void {
    const current = sharedBoundedRead(read);
    new Gauge({
      name: 'loopfleet_queue_jobs',
      help: "The queue's BullMQ jobs by state, fleet-wide (every worker reports it: take max). NaN when Redis did not answer.",
      labelNames: ['state'],
      registers,
      async collect() {
        const counts = await current();
        for (const state of QUEUE_JOB_STATES) this.set({ state }, counts === null ? Number.NaN : (counts[state] ?? 0));
      },
    });
    new Gauge({
      name: 'loopfleet_queue_readable',
      help: "1 when this scrape read the queue's job counts from Redis, 0 when the read failed or took over 2 s.",
      registers,
      async collect() {
        this.set((await current()) === null ? 0 : 1);
      },
    });
  }

  /** A run begins: `input` as the claim left it (`startedAt` set by Postgres). */
  runStarted(input: InputRecord, resumed: boolean, agent: string): void {
    this.#active.inc();
    this.#inputsStarted.inc({ agent, resumed: String(resumed) });
    if (!resumed && input.startedAt !== null) this.#dispatch.observe(Math.max(0, input.startedAt.getTime() - input.acceptedAt.getTime()) / 1000);
  }

  /** A run ended after `seconds`: `status` null when it was stopped before an outcome (lease lost, shutdown). */
  runEnded(status: RunOutcome | null, seconds: number, agent: string): void {
    this.#active.dec();
    if (status !== null) this.#run.observe({ agent, status }, seconds);
  }

  /** An input's `input_finished` was published (the run's own, or a steered input's). */
  inputFinished(status: RunOutcome, agent: string): void {
    this.#inputsFinished.inc({ agent, status });
  }

  /** An MCP server's state changed (`McpServerStatus` of src/mcp); `server` is a configured name, so the series are bounded. */
  mcpServerStatus(server: string, up: boolean): void {
    this.#mcpServerUp.set({ server }, up ? 1 : 0);
  }

  /** A job's processing ended; `kind` is its name when the worker handles such jobs, else `other`. */
  jobDone(kind: string, outcome: JobOutcome): void {
    this.#jobs.inc({ kind, outcome });
  }

  /** A drain of a session ended with `outcome`. */
  drainEnded(outcome: string): void {
    this.#drains.inc({ outcome });
  }

  /** A timer's firing was handled with `outcome` (and announced with `timer_fired`). */
  timerFired(outcome: 'delivered' | 'skipped' | 'cancelled' | 'postponed' | 'error'): void {
    this.#timerFirings.inc({ outcome });
  }

  /** A reply's tokens and cost, by model (and by tenant only when `METRICS_TENANT_LABEL` is on). */
  #countUsage(event: Extract<FleetEvent, { type: 'llm_call_completed' }>, agent: string, tenant: string): void {
    const usage = event.usage;
    if (usage === null) return;
    const labels: Record<string, string> = { agent, provider: event.provider, model: event.model };
    if (this.#tenantLabel) labels['tenant'] = tenant;
    const kinds: [kind: string, count: number][] = [
      ['prompt', usage.promptTokens],
      ['completion', usage.completionTokens],
      ['cache_read', usage.cachedTokens],
      ['cache_write', usage.cacheWriteTokens],
      ['reasoning', usage.reasoningTokens],
    ];
    for (const [kind, count] of kinds) this.#tokens.inc(Object.assign({}, labels, { kind }), count);
    if (event.costUsd !== undefined) this.#cost.inc(labels, event.costUsd);
  }

  /** A sweep ran (on whichever worker BullMQ gave the repeatable job). */
  swept(report: SweepReport): void {
    if (report.kicked > 0) this.#repairs.inc({ kind: 'stranded_kicked' }, report.kicked);
    if (report.strayKeysRemoved > 0) this.#repairs.inc({ kind: 'stray_key_removed' }, report.strayKeysRemoved);
    if ((report.parked ?? 0) > 0) this.#repairs.inc({ kind: 'capped_parked' }, report.parked);
    if (report.timersRearmed > 0) this.#repairs.inc({ kind: 'timer_rearmed' }, report.timersRearmed);
  }

  /**
   * One event of a run, as its sink receives it. Never throws: prom-client refuses a negative or
   * non-finite increment (a custom `Llm` may report such usage), and a metric must not cost a run.
   */
  observe(event: FleetEvent, agent: string, tenant?: string): void {
    try {
      this.#count(event, agent, tenant ?? '');
    } catch {
      // The event is still published; only this sample is lost.
    }
  }

  #count(event: FleetEvent, agent: string, tenant: string): void {
    switch (event.type) {
      case 'llm_call_completed': {
        const provider = event.provider;
        this.#llmCalls.inc({ agent, provider, outcome: event.success ? 'ok' : 'error' });
        this.#llmSeconds.observe({ agent, provider }, event.durationMs / 1000);
        if (event.timeToFirstTokenMs !== null) this.#firstToken.observe({ agent, provider }, event.timeToFirstTokenMs / 1000);
        this.#countUsage(event, agent, tenant);
        return;
      }
      case 'round_completed':
        this.#rounds.inc({ agent });
        return;
      case 'llm_retry_attempted':
        this.#retries.inc({ agent });
        return;
      case 'llm_fallback':
        this.#fallbacks.inc({ agent, from: event.from, to: event.to, reason: event.reason });
        return;
      case 'llm_degraded':
        this.#degraded.inc({ agent, reason: event.reason });
        return;
      case 'subagent_started':
        this.#subagents.inc({ agent, event: 'started', status: '' });
        return;
      case 'subagent_finished':
        this.#subagents.inc({ agent, event: 'finished', status: event.status });
        return;
      case 'tool_call_completed': {
        const tool = this.#isTool(event.name) ? event.name : 'unknown';
        this.#toolCalls.inc({ agent, tool, outcome: event.failed ? 'failed' : 'ok' });
        this.#toolSeconds.observe({ agent, tool }, event.durationMs / 1000);
        return;
      }
      default:
        return;
    }
  }

  /** The Prometheus text exposition of every metric. */
  async render(): Promise<{ contentType: string; body: string }> {
    const [own, process] = await Promise.all([this.registry.metrics(), this.#process.metrics()]);
    return { contentType: this.registry.contentType, body: `${own}\n${process}` };
  }
}

/**
 * `read` as the gauges of one scrape take it: a read still running is joined rather than sent again
 * (a slow Postgres or Redis must not pile reads up), and each caller waits for it at most
 * {@link BACKLOG_READ_TIMEOUT_MS}; null then, or when the read failed.
 */
function sharedBoundedRead<T>(read: () => Promise<T>): () => Promise<T | null> {
  let running: Promise<T> | null = null;
  return async () => {
    running ??= read().finally(() => {
      running = null;
    });
    const attempt = await attemptWithin(running, BACKLOG_READ_TIMEOUT_MS);
    return attempt.ok ? attempt.value : null;
  };
}
