/**
 * The per-round reads of a session's active window (the model's view, the sanitizer, the compaction
 * check, the call ids in use), each exactly its whole-window counterpart but paying only for the rows
 * appended since the last round, through prefix digests kept with the rows.
 */
export { sanitizeWindow } from './sanitize-window.js';
export { arrangedWindowMessages } from './window-view.js';
export { planWindowFold, windowTokens } from './window-fold.js';
export { windowCallIds, windowHasFold } from './window-call-ids.js';
export { findDigest, type PrefixFacts, type WindowDigest } from './window-digest.js';
