import { defineHook } from 'loopfleet';

/**
 * An example `LOOPFLEET_HOOKS` module: its default export is the array of hooks.
 *
 *   LOOPFLEET_HOOKS=examples/hooks/approve-tools.js
 *
 * Two hooks around every tool call:
 *
 * - `approve-tools` (`tool.before`): a tool in `NEEDS_APPROVAL` runs only for an approved session.
 *   Otherwise the hook answers `skip`: the tool does not run, and the model gets `output` as its result.
 * - `tool-log` (`tool.after`): one JSON line on standard error per call, when `EXAMPLE_TOOL_LOG=1`.
 *
 * Hooks run inside the worker, on every session of every agent. Keep them quick: the run waits.
 * A hook that throws fails the input.
 */

/** Tools that change something outside the fleet. */
const NEEDS_APPROVAL = new Set(['set_alert']);

/**
 * Whether a session may run tools that need approval. Here: sessions whose id starts with `ops-`.
 * In your fleet: ask your own system (a database row, a ticket, a person).
 */
function isApproved(sessionId) {
  return sessionId.startsWith('ops-');
}

export default [
  defineHook({
    point: 'tool.before',
    name: 'approve-tools',
    handler: (call) => {
      if (!NEEDS_APPROVAL.has(call.toolCall.name) || isApproved(call.sessionId)) return 'continue';
      call.output = `Error: "${call.toolCall.name}" needs approval, and session ${call.sessionId} does not have it. Tell the user instead.`;
      return 'skip';
    },
  }),
  defineHook({
    point: 'tool.after',
    name: 'tool-log',
    handler: (call) => {
      if (process.env.EXAMPLE_TOOL_LOG !== '1') return 'continue';
      const line = { hook: 'tool-log', sessionId: call.sessionId, inputSeq: call.inputSeq, tool: call.toolCall.name, failed: call.failed };
      process.stderr.write(`${JSON.stringify(line)}\n`);
      return 'continue';
    },
  }),
];
