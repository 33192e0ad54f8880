/** JSON schemas the REST routes share: validation of what comes in, shape of what goes out (and the OpenAPI document). */

export const sessionIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, maxLength: 128, description: 'Session id: 1–128 of A-Z a-z 0-9 _ . : -' } },
} as const;

const looseObject = { type: 'object', additionalProperties: true } as const;
const nullableDate = { type: 'string', format: 'date-time', nullable: true } as const;
const date = { type: 'string', format: 'date-time' } as const;

export const statsSchema = Object.assign({ description: 'Cumulative counters over finished inputs' }, looseObject);

export const inputCountsSchema = {
  type: 'object',
  additionalProperties: { type: 'integer' },
  description: 'Inputs by status (pending, running, waiting, done, failed, cancelled) and total',
} as const;

export const childSchema = {
  type: 'object',
  properties: { sessionId: { type: 'string' }, agent: { type: 'string' }, toolCallId: { type: 'string' }, status: { type: 'string' } },
} as const;

export const sessionViewSchema = {
  type: 'object',
  required: ['id', 'tenant', 'agent', 'status'],
  properties: {
    id: { type: 'string' },
    tenant: { type: 'string' },
    agent: { type: 'string' },
    status: { type: 'string', enum: ['idle', 'running', 'waiting_for_input', 'waiting_for_children'] },
    systemPrompt: { type: 'string', nullable: true },
    metadata: looseObject,
    parentSessionId: { type: 'string', nullable: true },
    rootSessionId: { type: 'string' },
    depth: { type: 'integer' },
    lease: {
      type: 'object',
      description: 'The worker holding the lease (owner null when none)',
      properties: { owner: { type: 'string', nullable: true }, expiresAt: nullableDate },
    },
    pending: Object.assign({ nullable: true, description: 'The open request_user_input question, if any' }, looseObject),
    cancelRequestedAt: nullableDate,
    inputs: inputCountsSchema,
    stats: statsSchema,
    children: { type: 'array', items: childSchema },
    eventCursor: { type: 'string', nullable: true, description: 'Follow the events from here (SSE ?after=) to see what the view does not hold yet' },
    createdAt: date,
    updatedAt: date,
  },
} as const;

export const sessionSummarySchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    tenant: { type: 'string' },
    agent: { type: 'string' },
    status: { type: 'string' },
    parentSessionId: { type: 'string', nullable: true },
    inputs: { type: 'integer', description: 'Inputs accepted so far' },
    stats: statsSchema,
    createdAt: date,
    lastActivityAt: date,
  },
} as const;

export const inputRecordSchema = {
  type: 'object',
  properties: {
    sessionId: { type: 'string' },
    seq: { type: 'integer' },
    inputId: { type: 'string' },
    kind: { type: 'string' },
    mode: { type: 'string' },
    payload: looseObject,
    status: { type: 'string', enum: ['pending', 'running', 'waiting', 'done', 'failed', 'cancelled'] },
    attempts: { type: 'integer' },
    steeredInto: { type: 'integer', nullable: true },
    result: Object.assign({ nullable: true }, looseObject),
    awaiting: { type: 'array', items: { type: 'string' }, nullable: true },
    errorCode: { type: 'string', nullable: true },
    errorMessage: { type: 'string', nullable: true },
    acceptedAt: date,
    startedAt: nullableDate,
    finishedAt: nullableDate,
  },
} as const;

export const acceptedSchema = {
  type: 'object',
  required: ['sessionId', 'seq', 'inputId', 'duplicate', 'eventId', 'wakeQueued'],
  properties: {
    sessionId: { type: 'string' },
    seq: { type: 'integer' },
    inputId: { type: 'string' },
    duplicate: { type: 'boolean', description: 'The Idempotency-Key was accepted before: seq is the original' },
    eventId: { type: 'string', nullable: true, description: 'Stream id of the input_accepted event (null for a duplicate)' },
    wakeQueued: { type: 'boolean', description: 'False when the wake-up job could not be queued (Redis down): the input is stored, and the sweeper runs it' },
  },
} as const;

export const messageSchema = Object.assign({ description: 'A stored message: seq, role, content, tool calls …' }, looseObject);
export const timerSchema = Object.assign({ description: 'A durable timer' }, looseObject);
export const agentSchema = Object.assign({ description: 'An agent the fleet serves, with its workers' }, looseObject);
