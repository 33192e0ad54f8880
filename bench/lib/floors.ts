/**
 * The floors every fleet figure is compared against, measured in the same run on the same services:
 * the cheapest way to do the same amount of queue, Postgres and Redis-stream work.
 */
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { deleteQueueKeys, uniqueName } from './fleet.js';
import { pool } from './stats.js';

/** Adds no-op jobs to one floor queue; opened (connected, ready) before the floor's clock starts. */
export interface NoopJobs {
  /** Adds `n` no-op jobs, `concurrency` adds in flight; resolves once every add resolved. */
  add(n: number, concurrency: number): Promise<void>;
  close(): Promise<void>;
}

/** Where the floor's adds are made: this process (`inProcessNoopJobs`) or a producer process. */
export interface NoopJobProducer {
  open(redisUrl: string, queueName: string): Promise<NoopJobs>;
}

/** The floor's adds themselves, with the raw BullMQ API. */
export async function addNoopJobs(queue: Queue, n: number, concurrency: number): Promise<void> {
  await pool(Array.from({ length: n }, (_, i) => i), concurrency, async (i) => {
    await queue.add('noop', { i }, { removeOnComplete: true, removeOnFail: true });
  });
}

/** Adds made by a `Queue` of this process, on a connection of its own. */
export const inProcessNoopJobs: NoopJobProducer = {
  async open(redisUrl, queueName) {
    const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
    const queue = new Queue(queueName, { connection });
    const close = async () => {
      await queue.close();
      await connection.quit();
    };
    try {
      await queue.waitUntilReady();
    } catch (error) {
      await close();
      throw error;
    }
    return { add: (n, concurrency) => addNoopJobs(queue, n, concurrency), close };
  },
};

/**
 * Raw BullMQ: `n` no-op jobs added (`producerConcurrency` adds in flight) by `producer` — this
 * process by default — and processed by one worker in this process at `concurrency`; milliseconds
 * from the first add until the last job completed.
 */
export async function bullmqFloor(redisUrl: string, n: number, concurrency: number, producerConcurrency: number, producer: NoopJobProducer = inProcessNoopJobs): Promise<number> {
  const name = uniqueName('floor');
  const jobs = await producer.open(redisUrl, name);
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const workerConnection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  // The bench's own handle on the queue, to remove it afterwards whoever added the jobs.
  const queue = new Queue(name, { connection });
  let completed = 0;
  let done: () => void = () => undefined;
  const allDone = new Promise<void>((resolve) => (done = resolve));
  const worker = new Worker(name, async () => undefined, { connection: workerConnection, concurrency, autorun: false });
  worker.on('completed', () => {
    completed += 1;
    if (completed === n) done();
  });
  try {
    void worker.run();
    await worker.waitUntilReady();
    const started = performance.now();
    await jobs.add(n, producerConcurrency);
    await allDone;
    return performance.now() - started;
  } finally {
    await worker.close();
    await jobs.close();
    await queue.obliterate({ force: true }).catch(() => undefined);
    await deleteQueueKeys(connection, name).catch(() => undefined);
    await queue.close();
    await connection.quit();
    await workerConnection.quit();
  }
}

/**
 * Raw Postgres: for each of `n` inputs, `txPerInput` transactions of `statementsPerTx` statements
 * (BEGIN, single-row inserts, COMMIT — the same count the fleet sent per input), `concurrency` in
 * flight on a pool of `poolSize`; synchronous_commit as configured (on). Milliseconds.
 */
export async function postgresFloor(databaseUrl: string, n: number, txPerInput: number, statementsPerTx: number, poolSize: number, concurrency: number): Promise<number> {
  const db = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
  try {
    await db.query('CREATE TABLE IF NOT EXISTS bench_floor (id bigserial PRIMARY KEY, k text NOT NULL, v jsonb NOT NULL)');
    await db.query('TRUNCATE bench_floor');
    const inserts = Math.max(1, Math.round(statementsPerTx) - 2);
    const total = Math.round(n * txPerInput);
    const started = performance.now();
    await pool(Array.from({ length: total }, (_, i) => i), concurrency, async (i) => {
      const client = await db.connect();
      try {
        await client.query('BEGIN');
        for (let s = 0; s < inserts; s += 1) await client.query('INSERT INTO bench_floor (k, v) VALUES ($1, $2)', [`s${i}`, '{"role":"assistant","content":"word"}']);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    });
    return performance.now() - started;
  } finally {
    await db.end();
  }
}

/**
 * Raw Redis streams: `entriesPerInput` `XADD`s per input for `n` inputs across `sessions` stream keys,
 * each input's entries in one pipeline, `concurrency` pipelines in flight. Milliseconds.
 */
export async function xaddFloor(redis: Redis, n: number, entriesPerInput: number, sessions: number, concurrency: number): Promise<number> {
  const name = uniqueName('xadd');
  const entries = Math.max(1, Math.round(entriesPerInput));
  try {
    const started = performance.now();
    await pool(Array.from({ length: n }, (_, i) => i), concurrency, async (i) => {
      const pipeline = redis.pipeline();
      for (let e = 0; e < entries; e += 1) {
        pipeline.xadd(`${name}:events:s${i % sessions}`, '*', 'type', 'stream_delta', 'data', `{"seq":${e},"sessionId":"s${i % sessions}","inputSeq":${i},"text":"word${e} "}`);
      }
      const results = (await pipeline.exec()) ?? [];
      if (results.some(([error]) => error !== null)) throw new Error('xadd floor: an XADD failed');
    });
    return performance.now() - started;
  } finally {
    await deleteQueueKeys(redis, name);
  }
}
