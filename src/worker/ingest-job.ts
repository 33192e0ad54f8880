import { createHash } from 'node:crypto';
import { z } from 'zod';
import { InputInvalidError } from '../core/errors/index.js';
import { assertNewSessionId } from '../fleet/session-id.js';
import { optionalAgentName } from '../fleet/agent-name.js';
import { optionalTenant } from '../fleet/tenant-name.js';
import { INPUT_MODES } from '../core/session-types.js';
import { parseTraceContext } from '../core/ports/tracing.js';
import { acceptAndKick } from '../fleet/accept-input.js';
import { MAX_ORIGIN_JOB_ID_LENGTH } from '../fleet/input-id.js';
import type { WorkerContext } from './worker-context.js';

/** Raw-path job data (docs/fleet.md, "The raw path"), as any BullMQ client in any language sends it. */
const rawJobSchema = z
  .object({
    // Checked by assertNewSessionId, so a missing id reads "session id must be a string, got undefined".
    sessionId: z.unknown().optional(),
    input: z.unknown().optional(),
    inputId: z.string().optional(),
    mode: z.enum(INPUT_MODES).optional(),
    options: z.unknown().optional(),
    submit: z.unknown().optional(),
    abortPending: z.unknown().optional(),
    // Checked by optionalAgentName and optionalTenant, like the client's add.
    agent: z.unknown().optional(),
    tenant: z.unknown().optional(),
    // The sender's span (W3C trace context), continued by the input's span (docs/tracing.md); best effort.
    traceparent: z.unknown().optional(),
    tracestate: z.unknown().optional(),
  })
  .strict();

export interface IngestResult {
  seq: number;
  inputId: string;
  duplicate: boolean;
}

/**
 * Ingests a raw `send`/`resume` job into the inbox exactly once and kicks the drain. The input id
 * defaults to one derived from the job id, so a redelivered job is not ingested twice. Invalid data
 * throws a typed input error: the job router fails the job without retry and nothing is written. So
 * does `data.agent` naming an agent no worker registered (`agent.not_found`) or another agent than its
 * session's (`session.agent_mismatch`), and `data.tenant` naming another tenant than its session's
 * (`session.tenant_mismatch`), and a session of another queue on the database (`session.queue_mismatch`):
 * the store refuses those in the accept itself.
 */
export async function ingestJob(
  ctx: WorkerContext,
  kind: 'send' | 'resume',
  jobId: string | undefined,
  data: unknown,
  jobTimestamp?: number,
): Promise<IngestResult> {
  const parsed = rawJobSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InputInvalidError(`invalid ${kind} job data: ${issue?.path.join('.') || 'data'}: ${issue?.message ?? 'invalid'}`);
  }
  const { sessionId, inputId, mode, agent, tenant, traceparent, tracestate, ...rest } = parsed.data;
  const id = assertNewSessionId(sessionId);
  const agentName = optionalAgentName(agent, 'data.agent');
  const tenantName = optionalTenant(tenant, 'data.tenant');
  const payload = Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined));
  if (kind === 'send' && payload.input === undefined) throw new InputInvalidError('invalid send job data: input is required');
  const accepted = await acceptAndKick(
    Object.assign(
      { store: ctx.store, queue: ctx.queue, fair: ctx.fair, maxInputBytes: ctx.settings.maxInputBytes, publish: ctx.publisher.publish.bind(ctx.publisher), logger: ctx.logger },
      ctx.admission !== undefined ? { admission: ctx.admission } : {},
    ),
    {
      sessionId: id,
      kind,
      payload,
      inputId: inputId ?? jobInputId(jobId, jobTimestamp),
      ...(mode !== undefined ? { mode } : {}),
      ...(jobId !== undefined ? { originJobId: originJobId(jobId) } : {}),
      traceContext: parseTraceContext(traceparent, tracestate),
      ...(agentName !== undefined ? { agent: agentName } : {}),
      ...(tenantName !== undefined ? { tenant: tenantName } : {}),
    },
  );
  return { seq: accepted.seq, inputId: accepted.inputId, duplicate: accepted.duplicate };
}

/**
 * `bullmq:<job id>` when the id fits the input-id alphabet, else `bullmq-sha256:<hash of the whole
 * id>`: every job id gets its own input id (a redelivery the same one), and no id used as it is can
 * take the form of a hashed one. (Until session 13 an unfit id became a hex of its first 90 bytes
 * under `bullmq:`, so two long ids, or `"a "` and `"6120"`, shared an input id and the second job was
 * taken for a redelivery of the first.)
 *
 * An id BullMQ numbered itself (an integer: BullMQ refuses integer custom ids) comes from the
 * queue's counter, which a Redis flush or a restart without persistence sets back to 0: a new job
 * would then take an old job's number and be taken for its redelivery, and its input was lost. Such
 * an id is qualified by the job's creation time (`jobTimestamp`, kept by a redelivery):
 * `bullmq:<id>@<timestamp>`.
 */
export function jobInputId(jobId: string | undefined, jobTimestamp?: number): string {
  if (jobId === undefined) throw new InputInvalidError('a raw job without an id needs an explicit inputId');
  if (AUTO_JOB_ID.test(jobId) && jobTimestamp !== undefined && Number.isSafeInteger(jobTimestamp) && jobTimestamp >= 0) {
    return `bullmq:${jobId}@${jobTimestamp}`;
  }
  if (/^[A-Za-z0-9_.:@/-]{1,190}$/.test(jobId)) return `bullmq:${jobId}`;
  return `bullmq-sha256:${sha256(jobId)}`;
}

/** A job id BullMQ numbered from the queue's counter (at most 16 digits: the counter is a Redis integer well below 2^53). */
const AUTO_JOB_ID = /^[1-9][0-9]{0,15}$/;

/**
 * The job id as the input records where it came from; one the column cannot hold — longer than it
 * allows, or with text PostgreSQL cannot store (U+0000, an unpaired surrogate) — by its hash.
 */
export function originJobId(jobId: string): string {
  const storable = jobId.length > 0 && jobId.length <= MAX_ORIGIN_JOB_ID_LENGTH && !jobId.includes('\u0000') && jobId.isWellFormed();
  return storable ? jobId : `sha256:${sha256(jobId)}`;
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
