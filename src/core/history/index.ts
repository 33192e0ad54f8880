/** Tool-call protocol of the history (I4): the checker and the always-on sanitizer. */
export { assertProtocolValid, protocolViolations, type ProtocolCheckOptions } from './validate-protocol.js';
export { INTERRUPTED_TOOL_RESULT, sanitizeHistory, type Repair, type SanitizeResult } from './sanitize-history.js';
