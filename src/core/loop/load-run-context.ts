import { resolveAgentProfile, type AgentProfile } from '../agent-profile.js';
import { InputInvalidError, SessionNotFoundError } from '../errors/index.js';
import { overridesOf, parseInputPayload, type ParsedInput } from '../input-payload.js';
import type { ToolCallRecord } from '../session-types.js';
import { compileResponseFormat, type StructuredValidator } from '../structured-output/index.js';
import { recordedProgress } from './recorded-progress.js';
import { emptyRunTrace } from './run-state.js';
import type { LoopDeps, RunContext, RunParams } from './run-context.js';

/**
 * Rebuilds a run's state from the store, so a fresh worker continues a run exactly where the last
 * committed step left it: the active window, the pending calls, the usage already spent (from the
 * per-round rows), the next round index, and the ledger's in-doubt calls.
 */
export async function loadRunContext(deps: LoopDeps, params: RunParams): Promise<RunContext> {
  const { store } = deps;
  const [session, { window, usageRounds: usageRows, openToolCalls: openCalls }] = await Promise.all([
    params.session === undefined ? store.getSession(params.sessionId) : Promise.resolve(params.session),
    store.loadRunState(params.sessionId, params.input.seq),
  ]);
  if (session === null) throw new SessionNotFoundError(`session ${params.sessionId} does not exist`);
  const parsed = parseInputPayloadSafely(params);
  const overrides = parsed === null ? {} : overridesOf(parsed);
  const profile = resolveAgentProfile({
    ...deps.profile,
    ...(overrides.model !== undefined ? { model: overrides.model } : {}),
    ...(overrides.maxRounds !== undefined ? { maxRounds: overrides.maxRounds } : {}),
    ...(overrides.responseFormat !== undefined ? { responseFormat: overrides.responseFormat } : {}),
    ...(overrides.maxTokensPerInput !== undefined ? { maxTokensPerInput: overrides.maxTokensPerInput } : {}),
  });
  const recorded = recordedProgress(params.input.seq, window, usageRows);
  const checked = checkPayload(deps, params, parsed, profile, overrides.tools);
  const ctx: RunContext = {
    deps,
    params,
    session,
    parsed: parsed ?? { kind: 'resume', payload: {} },
    profile,
    tools: overrides.tools === undefined ? deps.tools : deps.tools.subset(overrides.tools),
    allowedTools: overrides.tools === undefined ? null : [...overrides.tools],
    systemPrompt: overrides.systemPrompt ?? session.systemPrompt ?? profile.systemPrompt,
    stored: {
      window,
      pending: session.pending,
      lastMessageSeq: session.nextMessageSeq,
      deferred: [],
      pendingInputs: params.pendingInputs ?? true,
      pendingSteers: params.pendingSteers ?? true,
    },
    state: {
      round: recorded.rounds,
      roundLimit: profile.maxRounds,
      budgetGraceUntil: 0,
      completeDecideFires: 0,
      usage: recorded.usage,
      toolCalls: recorded.toolCalls,
      emptyStreak: 0,
      truncationStreak: 0,
      structuredRetries: 0,
      startedCalls: new Set(),
      spawned: false,
      childResults: null,
      inDoubt: new Map(openCalls.filter((call) => call.status === 'started').map((call): [string, ToolCallRecord] => [call.toolCallId, call])),
      trace: emptyRunTrace(),
    },
    ...checked,
  };
  return ctx;
}

/**
 * Problems with what the caller asked for: the run fails the input with them, before any round. The
 * response format's schema is compiled here, once: its failure to compile is such a problem too.
 */
function checkPayload(
  deps: LoopDeps,
  params: RunParams,
  parsed: ParsedInput | null,
  profile: AgentProfile,
  tools: string[] | undefined,
): { payloadError?: Error; structuredValidator?: StructuredValidator } {
  if (parsed === null) return { payloadError: payloadError(params) };
  const unknown = tools === undefined ? [] : deps.tools.unknownNames(tools);
  if (unknown.length > 0) return { payloadError: new InputInvalidError(`unknown tools in options.tools: ${unknown.join(', ')}`) };
  if (profile.responseFormat === null) return {};
  try {
    return { structuredValidator: compileResponseFormat(profile.responseFormat) };
  } catch (error) {
    return { payloadError: error as Error };
  }
}

function parseInputPayloadSafely(params: RunParams): ParsedInput | null {
  try {
    return parseInputPayload(params.input.kind, params.input.payload);
  } catch {
    return null;
  }
}

function payloadError(params: RunParams): Error {
  try {
    parseInputPayload(params.input.kind, params.input.payload);
    return new InputInvalidError('invalid input');
  } catch (error) {
    return error as Error;
  }
}
