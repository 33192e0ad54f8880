/**
 * loopfleet itself as a peer: the real worker (`startWorker`, configured like `throughput.bench.ts`'s
 * standard run) with its own providers — the in-process `StandardScriptedLlm` (the same replies as the
 * shared scripted model) or its `openai` provider (the real SDK) against the fake server — the `noop`
 * tool, and the real producer (`SessionQueue.add`, `inputId` = the input's id).
 *
 * loopfleet writes its OWN 28 stream entries per input (to `<queue>:events:<session>`, through its
 * publish script); it does not use `InputEvents`. So the two harness counters are fed differently:
 * - finishes: the publish script announces every `input_finished` on the session's finish channel
 *   (it always PUBLISHes there: with no subscriber that is a lookup). `setup` (the orchestrator's
 *   process) pattern-subscribes to those channels and INCRBYs `peers:<runId>:finished`, coalescing the
 *   messages of one read into one command: no work added to the worker process; Redis delivers one
 *   message per input and runs about one INCRBY per few inputs (the peers pipeline one INCR per input).
 * - accept → start (`startLatencies`): read after each phase, outside the measured window: the stream
 *   id of each input's `input_started` entry (Redis's clock, ms — the moment it was written, where the
 *   peers stamp `Date.now()` just before their `started()` pipeline) minus the producer's `addedAt`.
 *   Inputs are matched by `session_inputs (session_id, seq, input_id)`.
 * The `model` argument of `startWorker` is not used: loopfleet's providers are its own path to the model.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { benchConfig, deleteQueueKeys, StandardScriptedLlm, startBenchWorker } from '../../lib/fleet.js';
import { runMigrations } from '../../../src/store/postgres/migrate.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { eventStreamKey, FINISH_CHANNEL_SUFFIX } from '../../../src/fleet/fleet-keys.js';
import { finishedKey } from '../lib/standard.js';
import type { AddedInput, HarnessSystem } from '../lib/extras.js';
import type { PeerContext, VerifyResult } from '../lib/system.js';

const ENTRIES_PER_INPUT = 28;
const rootPackage = (dir: string) => JSON.parse(readFileSync(new URL(`../../${dir}/package.json`, import.meta.url), 'utf8')) as { version: string };
const commit = (() => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: fileURLToPath(new URL('.', import.meta.url)), encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
})();
const queueOf = (ctx: PeerContext) => `lfpeers_${ctx.runId}`.slice(0, 64);

/** The finish subscribers `setup` started, by run. */
const finishWatchers = new Map<string, { stop(): Promise<void> }>();

async function watchFinishes(ctx: PeerContext): Promise<{ stop(): Promise<void> }> {
  const sub = new Redis(ctx.redisUrl);
  const writer = new Redis(ctx.redisUrl);
  let pending = 0;
  let flushing = false;
  const flush = () => {
    if (flushing || pending === 0) return;
    flushing = true;
    const count = pending;
    pending = 0;
    void writer.incrby(finishedKey(ctx.runId), count).finally(() => {
      flushing = false;
      flush();
    });
  };
  sub.on('pmessage', () => {
    pending += 1;
    setImmediate(flush);
  });
  await sub.psubscribe(`${eventStreamKey(queueOf(ctx), '*')}${FINISH_CHANNEL_SUFFIX}`);
  return {
    async stop() {
      sub.disconnect();
      await writer.quit();
    },
  };
}

const loopfleet: HarnessSystem = {
  name: 'loopfleet',
  versions: () => ({ loopfleet: `${rootPackage('..').version} @ ${commit}`, bullmq: rootPackage('../node_modules/bullmq').version, node: process.version }),
  sweep: [{ concurrency: 64 }, { concurrency: 128 }, { concurrency: 256 }],

  async setup(ctx) {
    await runMigrations({ databaseUrl: ctx.pgUrl });
    finishWatchers.set(ctx.runId, await watchFinishes(ctx));
    return { serverPids: [] };
  },

  async startWorker(ctx) {
    const env: Record<string, string> = { DATABASE_URL: ctx.pgUrl, LOOPFLEET_QUEUE: queueOf(ctx), WORKER_CONCURRENCY: String(ctx.settings['concurrency'] ?? 128) };
    const openai = ctx.modelKind === 'openai';
    if (openai) Object.assign(env, { LLM_PROVIDER: 'openai', OPENAI_API_KEY: 'sk-bench', OPENAI_BASE_URL: ctx.openaiBaseUrl!, LLM_MODEL: 'gpt-bench' });
    const worker = await startBenchWorker(benchConfig(env), openai ? {} : { llm: new StandardScriptedLlm() });
    return { stop: () => worker.close({ graceMs: 5_000 }) };
  },

  async createProducer(ctx) {
    const queue = new SessionQueue({ databaseUrl: ctx.pgUrl, redisUrl: ctx.redisUrl, queueName: queueOf(ctx) });
    return {
      add: async (input) => void (await queue.add('send', { sessionId: input.sessionId, input: input.text, inputId: input.inputId })),
      close: () => queue.close(),
    };
  },

  async startLatencies(ctx, added: readonly AddedInput[]) {
    const redis = new Redis(ctx.redisUrl);
    const db = new pg.Client({ connectionString: ctx.pgUrl });
    await db.connect();
    try {
      const sessions = [...new Set(added.map((input) => input.sessionId))];
      const rows = await db.query<{ session_id: string; seq: string; input_id: string }>('SELECT session_id, seq, input_id FROM session_inputs WHERE session_id = ANY($1)', [sessions]);
      const seqOf = new Map(rows.rows.map((row) => [row.input_id, `${row.session_id}#${row.seq}`]));
      const startedAt = new Map<string, number>();
      const p = redis.pipeline();
      for (const sessionId of sessions) p.xrange(eventStreamKey(queueOf(ctx), sessionId), '-', '+');
      const replies = (await p.exec()) ?? [];
      replies.forEach(([, entries], i) => {
        for (const [id, fields] of (entries ?? []) as Array<[string, string[]]>) {
          if (fields[1] !== 'input_started') continue;
          const data = JSON.parse(fields[3] ?? '{}') as { inputSeq?: number };
          const key = `${sessions[i]}#${data.inputSeq}`;
          if (!startedAt.has(key)) startedAt.set(key, Number(id.split('-')[0]));
        }
      });
      return added.flatMap((input) => {
        const at = startedAt.get(seqOf.get(input.inputId) ?? '');
        return at === undefined ? [] : [at - input.addedAt];
      });
    } finally {
      redis.disconnect();
      await db.end();
    }
  },

  async verify(ctx, expected): Promise<VerifyResult> {
    const problems: string[] = [];
    const db = new pg.Client({ connectionString: ctx.pgUrl });
    const redis = new Redis(ctx.redisUrl);
    await db.connect();
    let historyInputs = 0;
    try {
      const sessions = [...expected.keys()];
      const inputs = await db.query<{ session_id: string; seq: string; input_id: string; status: string }>(
        'SELECT session_id, seq, input_id, status FROM session_inputs WHERE session_id = ANY($1) ORDER BY session_id, seq', [sessions]);
      // The history: the input's messages (user, assistant with the call, tool, assistant), by input seq.
      const messages = await db.query<{ session_id: string; input_seq: string; roles: string }>(
        "SELECT session_id, input_seq, string_agg(role, ',' ORDER BY seq) AS roles FROM messages WHERE session_id = ANY($1) AND kind = 'message' GROUP BY 1, 2", [sessions]);
      const rolesOf = new Map(messages.rows.map((row) => [`${row.session_id}#${row.input_seq}`, row.roles]));
      const bySession = new Map<string, typeof inputs.rows>();
      for (const row of inputs.rows) (bySession.get(row.session_id) ?? bySession.set(row.session_id, []).get(row.session_id)!).push(row);
      const odd: Array<[string, string]> = [];
      const lens = redis.pipeline();
      for (const sessionId of sessions) lens.xlen(eventStreamKey(queueOf(ctx), sessionId));
      const xlens = ((await lens.exec()) ?? []).map(([, n]) => Number(n));
      sessions.forEach((sessionId, i) => {
        const want = expected.get(sessionId)!;
        const got = bySession.get(sessionId) ?? [];
        if (got.map((row) => row.input_id).join() !== want.join()) problems.push(`${sessionId}: inputs ${got.map((r) => r.input_id).join()} != added ${want.join()}`);
        for (const row of got) {
          const roles = rolesOf.get(`${sessionId}#${row.seq}`);
          if (row.status === 'done' && roles === 'user,assistant,tool,assistant') historyInputs += 1;
          else problems.push(`${row.input_id}: status ${row.status}, history ${roles ?? 'none'}`);
        }
        if (xlens[i] !== want.length * ENTRIES_PER_INPUT) odd.push([sessionId, `${xlens[i]} stream entries for ${want.length} inputs`]);
      });
      // What the odd streams hold beyond 28 per input, by entry type (the first few), so a failure says what happened.
      for (const [sessionId, what] of odd.slice(0, 5)) {
        const entries = (await redis.xrange(eventStreamKey(queueOf(ctx), sessionId), '-', '+')) as Array<[string, string[]]>;
        const types: Record<string, number> = {};
        for (const [, fields] of entries) types[fields[1] ?? '?'] = (types[fields[1] ?? '?'] ?? 0) + 1;
        problems.push(`${sessionId}: ${what}: ${JSON.stringify(types)}`);
      }
      for (const [sessionId, what] of odd.slice(5)) problems.push(`${sessionId}: ${what}`);
    } finally {
      redis.disconnect();
      await db.end();
    }
    return { ok: problems.length === 0, historyInputs, problems: problems.slice(0, 20) };
  },

  async teardown(ctx) {
    await finishWatchers.get(ctx.runId)?.stop();
    finishWatchers.delete(ctx.runId);
    // The queue's Redis keys.
    const redis = new Redis(ctx.redisUrl);
    try {
      await deleteQueueKeys(redis, queueOf(ctx));
    } finally {
      redis.disconnect();
    }
  },
};

export default loopfleet;
