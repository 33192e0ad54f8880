import type { ChildResultPayload } from '../core/ports/children.js';
import type { ChildSpawn, InputResult } from '../core/session-types.js';

/**
 * What a finished child input gives its parent's `spawn_agent` call (docs/child-sessions.md): the
 * final text verbatim when it completed (its structured output as JSON text when it has one),
 * otherwise a short text naming its status and error code. Null for an outcome that is not an
 * answer yet: a child waiting for a person (`waiting_for_input`) keeps its parent waiting.
 */
export function childResultPayload(
  child: { sessionId: string; agent: string; spawn: ChildSpawn },
  result: InputResult,
  error: { code: string; message: string } | null,
): ChildResultPayload | null {
  if (result.status === 'waiting_for_input' || result.status === 'waiting_for_children') return null;
  const text =
    result.status === 'completed'
      ? result.output !== undefined
        ? JSON.stringify(result.output)
        : result.finalText
      : `[sub-agent ${child.sessionId} ended ${result.status}${error === null ? '' : `: ${error.code}`}]`;
  const usage = Object.assign({}, result.usage);
  return {
    toolCallId: child.spawn.toolCallId,
    childSessionId: child.sessionId,
    agent: child.agent,
    status: result.status,
    text,
    errorCode: error?.code ?? null,
    usage,
    wait: child.spawn.wait,
  };
}
