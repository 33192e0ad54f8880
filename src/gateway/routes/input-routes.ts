import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { InputInvalidError, InputNotFoundError } from '../../core/errors/index.js';
import type { InputRecord, InputStatus } from '../../core/session-types.js';
import type { AddData, AddKind } from '../../producer/add-request.js';
import type { InputHandle } from '../../producer/input-handle.js';
import type { SessionQueue } from '../../producer/session-queue.js';
import { ResultTimeoutError } from '../../producer/result-timeout-error.js';
import { acceptForCaller } from '../accept-for-caller.js';
import { conflictResponse, errorResponses, tooLargeResponse } from '../openapi.js';
import { requireSession } from '../session-access.js';
import { parseWait } from '../wait-duration.js';
import type { RestRouteDeps } from './rest-route-deps.js';
import { acceptedSchema, inputRecordSchema, sessionIdParams } from './schemas.js';

const tags = ['inputs'];
const written = Object.assign({ 202: acceptedSchema }, errorResponses, conflictResponse, tooLargeResponse);
const idempotencyHeaders = {
  type: 'object',
  properties: { 'idempotency-key': { type: 'string', minLength: 1, maxLength: 200, description: 'The inputId: a repeated key answers the original seq' } },
} as const;

const inputBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    kind: { type: 'string', enum: ['send', 'resume'], default: 'send' },
    input: { description: 'send: text, content parts, or { role: "user", content }' },
    inputId: { type: 'string', minLength: 1, maxLength: 200 },
    mode: { type: 'string', enum: ['queue', 'steer', 'interrupt'] },
    options: { type: 'object', additionalProperties: true },
    submit: { type: 'object', required: ['interactionId'], properties: { interactionId: { type: 'string' }, value: {} } },
    abortPending: { type: 'object', required: ['reason'], properties: { reason: { type: 'string' } } },
    agent: { type: 'string', minLength: 1, maxLength: 64 },
  },
} as const;

const submitBody = {
  type: 'object',
  additionalProperties: false,
  required: ['interactionId'],
  properties: { interactionId: { type: 'string', minLength: 1 }, value: { description: 'The answer' } },
} as const;

const seqParams = {
  type: 'object',
  required: ['id', 'seq'],
  properties: { id: sessionIdParams.properties.id, seq: { type: 'integer', minimum: 1 } },
} as const;

const statuses = ['pending', 'running', 'waiting', 'done', 'failed', 'cancelled'];

type InputBody = Omit<AddData, 'sessionId'> & { kind?: AddKind };

/** Add inputs, cancel, answer questions, and read inputs (one with a long-poll). */
export const inputRoutes: FastifyPluginAsync<RestRouteDeps> = async (app, { queue, config }) => {
  app.post<{ Params: { id: string }; Body: InputBody }>(
    '/v1/sessions/:id/inputs',
    { schema: { summary: 'Add an input (send or resume); creates the session when new', tags, params: sessionIdParams, headers: idempotencyHeaders, body: inputBody, response: written } },
    async (request, reply) => {
      const body = Object.assign({}, request.body);
      const kind = body.kind ?? 'send';
      delete body.kind;
      const data: AddData = Object.assign(body, { sessionId: request.params.id });
      const inputId = idempotencyKey(request, data.inputId);
      if (inputId !== undefined) data.inputId = inputId;
      return accepted(reply, await acceptForCaller(queue, request, kind, data));
    },
  );

  app.post<{ Params: { id: string }; Body: { interactionId: string; value?: unknown } }>(
    '/v1/sessions/:id/submit',
    { schema: { summary: 'Answer a request_user_input question', tags, params: sessionIdParams, headers: idempotencyHeaders, body: submitBody, response: written } },
    async (request, reply) => {
      const data: AddData = { sessionId: request.params.id, submit: { interactionId: request.body.interactionId, value: request.body.value } };
      const inputId = idempotencyKey(request, undefined);
      if (inputId !== undefined) data.inputId = inputId;
      return accepted(reply, await acceptForCaller(queue, request, 'resume', data));
    },
  );

  app.post<{ Params: { id: string } }>(
    '/v1/sessions/:id/cancel',
    {
      schema: {
        summary: "Cancel the session's running input (and its child sessions)",
        tags,
        params: sessionIdParams,
        response: Object.assign({ 202: { type: 'object', properties: { cancelled: { type: 'boolean' } } } }, errorResponses),
      },
    },
    async (request, reply) => {
      const session = await requireSession(queue, request, request.params.id, 'write');
      const cancelled = await queue.cancel(session.id);
      return reply.code(cancelled ? 202 : 404).send(cancelled ? { cancelled } : notFoundBody(session.id));
    },
  );

  app.get<{ Params: { id: string }; Querystring: { afterSeq?: number; limit?: number; status?: InputStatus[] } }>(
    '/v1/sessions/:id/inputs',
    {
      schema: {
        summary: "The session's inputs in seq order",
        tags,
        params: sessionIdParams,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            afterSeq: { type: 'integer', minimum: 0 },
            limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
            status: { type: 'array', items: { type: 'string', enum: statuses }, description: 'One or more statuses (repeat the parameter)' },
          },
        },
        response: Object.assign({ 200: { type: 'object', properties: { inputs: { type: 'array', items: inputRecordSchema } } } }, errorResponses),
      },
    },
    async (request) => {
      const session = await requireSession(queue, request, request.params.id, 'read');
      const { afterSeq, limit, status } = request.query;
      const options = Object.assign({}, afterSeq !== undefined ? { afterSeq } : {}, limit !== undefined ? { limit } : {}, status !== undefined ? { status } : {});
      return { inputs: await queue.sessions.inputs(session.id, options) };
    },
  );

  app.get<{ Params: { id: string; seq: number }; Querystring: { wait?: string } }>(
    '/v1/sessions/:id/inputs/:seq',
    {
      schema: {
        summary: 'One input with its status, result and error; ?wait= long-polls for its outcome',
        tags,
        params: seqParams,
        querystring: { type: 'object', additionalProperties: false, properties: { wait: { type: 'string', description: `30s, 500ms, 1m: wait up to this long for a terminal status` } } },
        response: Object.assign({ 200: inputRecordSchema }, errorResponses),
      },
    },
    async (request, reply) => {
      const session = await requireSession(queue, request, request.params.id, 'read');
      const { seq } = request.params;
      const waitMs = request.query.wait === undefined ? 0 : parseWait(request.query.wait, config.maxWaitMs);
      const record = await readInput(queue, session.id, seq);
      if (waitMs === 0 || isTerminal(record.status)) return record;
      await waitForOutcome(queue, reply, session.id, seq, waitMs);
      return readInput(queue, session.id, seq);
    },
  );
};

function idempotencyKey(request: FastifyRequest, inBody: string | undefined): string | undefined {
  const header = request.headers['idempotency-key'];
  const key = Array.isArray(header) ? header[0] : header;
  if (key !== undefined && inBody !== undefined && key !== inBody) {
    throw new InputInvalidError('Idempotency-Key and the body inputId differ: give one, or the same value');
  }
  return key ?? inBody;
}

function accepted(reply: FastifyReply, handle: InputHandle): FastifyReply {
  return reply.code(202).send({ sessionId: handle.sessionId, seq: handle.seq, inputId: handle.inputId, duplicate: handle.duplicate, eventId: handle.eventId, wakeQueued: handle.wakeQueued });
}

function notFoundBody(sessionId: string): { error: { code: string; message: string } } {
  return { error: { code: 'session.not_found', message: `session ${sessionId} does not exist` } };
}

async function readInput(queue: SessionQueue, sessionId: string, seq: number): Promise<InputRecord> {
  const [record] = await queue.sessions.inputs(sessionId, { afterSeq: seq - 1, limit: 1 });
  if (record === undefined || record.seq !== seq) {
    throw new InputNotFoundError(`session ${sessionId} has no input ${seq}`, { details: { sessionId, seq } });
  }
  return record;
}

function isTerminal(status: InputStatus): boolean {
  return status === 'done' || status === 'failed' || status === 'cancelled';
}

/** Waits for the input's outcome, at most `waitMs`, and no longer than the client stays. A timeout is not an error. */
async function waitForOutcome(queue: SessionQueue, reply: FastifyReply, sessionId: string, seq: number, waitMs: number): Promise<void> {
  const gone = new AbortController();
  const abort = (): void => gone.abort(new Error('client went away'));
  // The response closes before it is written only when the connection went.
  reply.raw.once('close', abort);
  try {
    await queue.result(sessionId, seq, { timeoutMs: waitMs, signal: gone.signal });
  } catch (error) {
    if (!(error instanceof ResultTimeoutError) && !gone.signal.aborted) throw error;
  } finally {
    reply.raw.off('close', abort);
  }
}
