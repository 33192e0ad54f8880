import { Worker, type Job, type JobJson } from 'bullmq';

/**
 * The data of a job whose stored `data` field is not JSON: what {@link QueueWorker} hands the
 * processor instead of the parsed data, so the job router can refuse it (`input.invalid`). Its size
 * only: the text is the producer's content, and a parser's message may quote it.
 */
export class UnreadableJobData {
  constructor(
    /** Length of the stored text, in UTF-16 code units. */
    readonly length: number,
  ) {}
}

/**
 * BullMQ's `Worker`, except for a job whose stored data is not JSON — written into Redis by a
 * producer that writes BullMQ's layout itself, in any language (docs/client.md, "The raw BullMQ
 * path"; S5). BullMQ parses a job's data as it takes the job (`Job.fromJSON`, inside its fetch);
 * the `SyntaxError` escaped its fetch loop as a worker `error`, the job stayed active without a
 * processor or a lock renewal, stalled, was taken again and failed the same way, on and on. Here such
 * a job is built with {@link UnreadableJobData} as its data and reaches the processor like any other,
 * which fails it once with a typed code; BullMQ moves it to `failed` as usual (`createJob` is the
 * worker's overridable hook for building a job from what Redis returned).
 */
export class QueueWorker extends Worker {
  protected override createJob(json: JobJson, jobId: string): Job {
    try {
      return super.createJob(json, jobId);
    } catch (error) {
      // Job.fromJSON parses nothing else that can throw: the rest was decoded before it is called.
      if (!(error instanceof SyntaxError)) throw error;
      const job = super.createJob(Object.assign({}, json, { data: 'null' }), jobId);
      job.data = new UnreadableJobData(json.data.length);
      return job;
    }
  }
}
