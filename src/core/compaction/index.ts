/** Compaction: when and what to fold, the summary request, and the compact note that replaces the fold. */
export { foldTriggerTokens, planFold, type FoldOptions, type FoldPlan } from './plan-fold.js';
export { applyFold, arrangeWindow } from './apply-fold.js';
export { COMPACT_NOTE_CLOSE, COMPACT_NOTE_OPEN, compactNoteMessage, compactNoteSummary } from './compact-note.js';
export { SUMMARY_SYSTEM_PROMPT, buildSummaryRequest, type SummaryPromptOptions, type SummaryRequest } from './summary-prompt.js';
