import type { BudgetPeriod, BudgetScope, BudgetUnit } from '../ports/budgets.js';
import type { LlmUsage } from '../ports/llm.js';
import type { RunOutcome, Usage } from '../session-types.js';

/**
 * The typed events of one run (power-loop's, in snake_case). Payload fields are camelCase. The
 * fleet's sink wraps each one with `sessionId`, `inputSeq` and a per-session event `seq`; the loop
 * itself never numbers events, so a crash and takeover cannot reuse a number.
 */
export type TerminalStatus = RunOutcome;

export type LoopEvent =
  | { type: 'session_started'; resumed: boolean }
  | { type: 'session_ended'; reason: string; status: TerminalStatus }
  | { type: 'round_started'; roundIndex: number }
  | { type: 'round_completed'; roundIndex: number; hasTools: boolean }
  | { type: 'round_tools_present'; roundIndex: number; hasTools: boolean }
  | { type: 'message_appended'; messageSeq: number; role: string; kind: string; roundIndex: number | null }
  | { type: 'stream_started'; streamId: string; attempt: number }
  | { type: 'stream_delta'; streamId: string; text: string }
  | { type: 'stream_think_delta'; streamId: string; text: string }
  | { type: 'stream_completed'; streamId: string; attempt: number; success: boolean }
  /** Text streamed by a failed attempt must be dropped by subscribers: the retry starts over. */
  | { type: 'stream_discarded'; streamId: string; attempt: number; reason: string }
  | { type: 'llm_call_started'; callId: string; roundIndex: number; attempt: number; model: string }
  | {
      type: 'llm_call_completed';
      callId: string;
      roundIndex: number;
      attempt: number;
      model: string;
      provider: string;
      durationMs: number;
      timeToFirstTokenMs: number | null;
      success: boolean;
      errorType: string | null;
      usage: LlmUsage | null;
      /** What the reply cost in USD at the worker's prices; absent when it failed or its model has no price. */
      costUsd?: number;
    }
  | {
      type: 'llm_retry_attempted';
      attempt: number;
      maxAttempts: number;
      errorType: string;
      errorMessage: string;
      nextDelayMs: number;
    }
  /** A fallback provider took over the call (`FallbackLlm`); metrics count switches by reason. */
  | { type: 'llm_fallback'; from: string; to: string; reason: 'non_retryable' | 'unavailable'; errorMessage: string }
  | { type: 'llm_degraded'; reason: 'retry_exhausted' | 'timeout' | 'non_retryable'; attempts: number; errorType: string; errorMessage: string }
  | { type: 'usage_updated'; roundIndex: number; usage: LlmUsage }
  | { type: 'tool_call_started'; name: string; toolCallId: string; toolInput: unknown; attempt: number }
  | { type: 'tool_call_completed'; name: string; toolCallId: string; toolInput: unknown; output: string; failed: boolean; durationMs: number }
  | { type: 'tool_call_failed'; name: string; toolCallId: string; toolInput: unknown; output: string; errorCode: string | null }
  | { type: 'tool_call_in_doubt'; name: string; toolCallId: string; policy: 'retry' | 'fail' }
  | { type: 'user_input_requested'; interactionId: string; toolCallId: string; prompt: string; options: string[] | null }
  | { type: 'steer_applied'; inputSeqs: number[]; roundIndex: number }
  /** `spawn_agent` started a child session (docs/child-sessions.md); not repeated when a recovered call finds it. */
  | { type: 'subagent_started'; childSessionId: string; agent: string; toolCallId: string; wait: boolean }
  /** A child's result reached this input's call (`wait: true`) or this session (`wait: false`). */
  | { type: 'subagent_finished'; childSessionId: string; toolCallId: string; status: RunOutcome; usage: Usage }
  | { type: 'status_changed'; kind: 'hit_round_limit'; maxRounds: number }
  | { type: 'status_changed'; kind: 'budget_exceeded'; budgetTokens: number; spentTokens: number; rounds: number }
  /** A budget (docs/budgets.md) refused the next model call: the input ends `budget_exceeded`. `limit`/`used`: tokens, or USD. */
  | { type: 'status_changed'; kind: 'budget_exceeded'; budgetId: number; scope: BudgetScope; unit: BudgetUnit; period: BudgetPeriod; limit: number; used: number; rounds: number }
  /** A budget's use crossed 80 % or 100 % of its limit with this input's call (once fleet-wide). `limit`/`used`: tokens, or USD. */
  | { type: 'budget_warning'; budgetId: number; scope: BudgetScope; unit: BudgetUnit; period: BudgetPeriod; threshold: 0.8 | 1; limit: number; used: number }
  | { type: 'status_changed'; kind: 'auto_compact'; phase: 'started' | 'completed' | 'failed'; beforeTokens: number; afterTokens: number | null; error?: string }
  | { type: 'loop_cancelled'; reason: string; roundIndex: number }
  | { type: 'agent_error'; errorCode: string; errorType: string; message: string };

export type LoopEventType = LoopEvent['type'];
