/** The API's JSON shapes as the viewer reads them (dates arrive as ISO strings). */

import type { SessionPage as CoreSessionPage, SessionSummary as CoreSessionSummary } from '../../src/core/ports/session-list.js';
import type { SessionStats, SessionStatus } from '../../src/core/session-types.js';

export type { SessionStatus };

/** A session's counters; the dates are left out (they arrive as text), a cost is shown when present. */
export type Stats = Omit<SessionStats, 'firstInputAt' | 'lastInputAt'> & { costUsd?: number; cost?: number };

/** A value as JSON carries it: dates become ISO 8601 text. */
export type Wire<T> = T extends Date ? string : T extends readonly (infer U)[] ? Wire<U>[] : T extends object ? { [K in keyof T]: Wire<T[K]> } : T;

/** One row of `GET /v1/sessions`. */
export type SessionSummary = Wire<CoreSessionSummary> & { stats: Stats };

export type SessionPage = Wire<CoreSessionPage> & { sessions: SessionSummary[] };

export interface Interaction {
  interactionId: string;
  toolCallId: string;
  toolName?: string;
  prompt: string;
  options: string[] | null;
}

export interface SessionView {
  id: string;
  tenant?: string;
  agent: string;
  status: SessionStatus;
  systemPrompt?: string | null;
  metadata?: Record<string, unknown>;
  parentSessionId?: string | null;
  rootSessionId?: string;
  depth?: number;
  lease?: { owner: string | null; expiresAt: string | null } | null;
  pending?: { interactions?: Interaction[] } | null;
  inputs?: Record<string, number>;
  stats?: Stats;
  children?: ChildLink[];
  eventCursor?: string;
  createdAt?: string;
  updatedAt?: string;
}

export interface ChildLink {
  id?: string;
  sessionId?: string;
  childSessionId?: string;
  agent?: string;
  status?: string;
}

export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ContentPart {
  type: string;
  text?: string;
  url?: string;
}

export interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | ContentPart[];
  toolCalls?: ToolCall[];
  toolCallId?: string;
  name?: string;
  isError?: boolean;
}

export interface StoredMessage {
  seq: number;
  inputSeq: number | null;
  round: number | null;
  kind: string;
  state: string;
  message: Message;
  createdAt: string;
}

export interface HistoryPage {
  messages: StoredMessage[];
  nextAfterSeq: number | null;
}

export interface Usage {
  promptTokens?: number;
  completionTokens?: number;
  totalTokens?: number;
  costUsd?: number;
}

export interface InputRecord {
  seq: number;
  inputId: string;
  kind: string;
  mode: string;
  payload: Record<string, unknown>;
  status: string;
  attempts: number;
  result: { status: string; finalText: string; rounds: number; toolCalls: number; usage?: Usage } | null;
  errorCode: string | null;
  errorMessage: string | null;
  acceptedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export interface Timer {
  id?: string;
  timerId?: string;
  dueAt?: string | null;
  status?: string;
  [key: string]: unknown;
}

/** One SSE entry: the Redis stream id, the event type, and its JSON data. */
export interface StreamEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

export interface Me {
  tenant: string | null;
  scope: string;
  sessions: string[] | null;
  subject: string | null;
}
