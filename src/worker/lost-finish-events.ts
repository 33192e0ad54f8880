import { TERMINAL_INPUT_STATUSES, type InputRecord } from '../core/session-types.js';
import { parseStreamEntry, type RawStreamEntry } from '../events/stream-entry.js';
import { eventFinishedKey, eventSeqKey, eventStreamKey } from '../fleet/fleet-keys.js';
import type { WorkerContext } from './worker-context.js';

/** Stream entries read back, newest first, before giving up on deciding (a trimmed or lost stream). */
const SCAN_LIMIT = 2_000;
/** The first page is small: the event looked for is normally among the newest few entries. */
const FIRST_PAGE = 16;
const MAX_PAGE = 256;
/** Seqs looked at per step back from the bound for the last input that ended: normally the first one. */
const HOST_STEP = 16;
/** Most inputs one `listInputs` page holds. */
const INPUT_PAGE = 1_000;

/**
 * `input_finished` is published after the input's terminal commit, so a holder that dies between the
 * two leaves an input finished in Postgres without its event (I6: exactly one per input). The next
 * drain of the session repairs it before running anything: it looks up the input that ended last
 * (the highest-seq finished input not steered into another) and every input steered into it, whatever
 * their seq, and publishes the event of each one whose finish is neither in the session's finished
 * set (written by the publish script since it has one) nor the latest entry of that input on the
 * stream (the check streams written before the set existed still need). An input with no entry on
 * the stream gets its event when nothing was ever trimmed off the stream (see `unpublished`); when
 * the stream cannot tell (trimmed past the input) nothing is published: `result()` and
 * `handle.events()` read the outcome from Postgres.
 *
 * That input is the only one whose finish can be owed: inputs run (and end) in seq order, a drain
 * runs nothing until this repair succeeded (`drain-session.ts`), and it stops at the first finish it
 * fails to publish, so each drain leaves at most its last input's finishes unpublished.
 *
 * Publishing is safe against the holder this repairs: if it was only stalled and publishes its event
 * after all (before or after this), the script writes whichever comes first and leaves the other out.
 *
 * Written under the drain's lease (`leaseToken`): refused if the session was deleted since. `nextSeq`
 * is the input this drain claimed (new or resumed): every input before it is finished. Null
 * when nothing was claimed: every input the lease saw was finished, and one accepted since is still
 * pending, which the search passes over. Returns how many events were written.
 */
export async function republishLostFinishes(ctx: WorkerContext, sessionId: string, leaseToken: number, nextSeq: number | null): Promise<number> {
  const bound = nextSeq === null ? ((await ctx.store.getSession(sessionId))?.nextSeq ?? 0) : nextSeq - 1;
  const owed = await lastEnded(ctx, sessionId, bound);
  // A host without a result is not finished as the repair knows it (never written so).
  if (owed === null || owed.host.result === null) return 0;
  const { host, steered } = owed;
  const written = await recordedFinishes(ctx, sessionId, host.seq, steered.at(-1)?.seq ?? host.seq);
  const open = [host, ...steered].filter((input) => !written.has(input.seq));
  if (open.length === 0) return 0;
  const missing = await unpublished(ctx, sessionId, open.map((input) => input.seq));
  const published: number[] = [];
  for (const input of open.filter((candidate) => missing.has(candidate.seq))) {
    // '' when the script left it out: the stalled holder's own event got there first.
    if ((await ctx.publisher.publish(sessionId, input.seq, finishedEvent(input, host), leaseToken)) !== '') published.push(input.seq);
  }
  if (published.length > 0) ctx.logger.warn({ sessionId, inputSeqs: published }, 'published input_finished events a dead worker never sent');
  return published.length;
}

/**
 * The input that ended last before `nextSeq` (see {@link republishLostFinishes}), or null: what a
 * child session's repair delivers to its parent again (`child-sessions.ts`).
 */
export async function lastEndedInput(ctx: WorkerContext, sessionId: string, nextSeq: number | null): Promise<InputRecord | null> {
  const bound = nextSeq === null ? ((await ctx.store.getSession(sessionId))?.nextSeq ?? 0) : nextSeq - 1;
  return (await lastEnded(ctx, sessionId, bound))?.host ?? null;
}

/**
 * The input with the highest seq up to `bound` that finished on its own (not steered), with every
 * input steered into it in seq order — also those past `bound`: a `steer` input joins the running
 * one ahead of queued inputs accepted before it. Reads the finished inputs after a point a few seqs
 * below `bound` (those up to it, and the steered ones past it: no input past it finished on its own),
 * stepping further back only while all of them were steered.
 */
async function lastEnded(ctx: WorkerContext, sessionId: string, bound: number): Promise<{ host: InputRecord; steered: InputRecord[] } | null> {
  const status = [...TERMINAL_INPUT_STATUSES];
  for (let end = bound; end >= 1; end -= HOST_STEP) {
    const from = Math.max(0, end - HOST_STEP);
    let page = await ctx.store.listInputs(sessionId, { status, afterSeq: from, limit: INPUT_PAGE });
    const host = page.filter((input) => input.seq <= end && input.steeredInto === null).at(-1);
    if (host === undefined) continue;
    const steered = page.filter((input) => input.steeredInto === host.seq);
    while (page.length === INPUT_PAGE) {
      page = await ctx.store.listInputs(sessionId, { status, afterSeq: page.at(-1)!.seq, limit: INPUT_PAGE });
      steered.push(...page.filter((input) => input.steeredInto === host.seq));
    }
    return { host, steered };
  }
  return null;
}

/** Inputs from `fromSeq` to `toSeq` whose `input_finished` the publish script recorded as written. */
async function recordedFinishes(ctx: WorkerContext, sessionId: string, fromSeq: number, toSeq: number): Promise<Set<number>> {
  const members = await ctx.redis.zrangebyscore(eventFinishedKey(ctx.queue.layout, sessionId), fromSeq, toSeq);
  return new Set(members.map(Number));
}

/** The event of a finished input, from its row (a steered input's row carries its host's result). */
function finishedEvent(input: InputRecord, host: InputRecord) {
  const result = input.result ?? host.result!;
  const error = input.errorCode === null ? null : { code: input.errorCode, message: input.errorMessage ?? '' };
  const { steeredInto: _steered, ...rest } = result;
  return { type: 'input_finished' as const, ...rest, error, ...(input.steeredInto === null ? {} : { steeredInto: input.steeredInto }) };
}

/**
 * Of `seqs`, those whose newest entry on the stream is not their `input_finished` (for inputs the
 * finished set does not know: ones finished before the publish script kept it, or not at all). Entries
 * of other inputs are skipped. An input with no entry within the scan is missing when the scan read the
 * stream back to its first entry (`seq` 1): nothing was ever trimmed off it, so nothing of that input
 * was ever written (its `input_accepted` was lost, and its holder died before its first event got
 * out). So it is when there is no stream and no numbered event: none was written, or Redis lost them
 * all, and a follower of the lost stream was told so by a `gap`. Otherwise it is undecided and left
 * out: the entries trimmed away may have held its finish.
 */
async function unpublished(ctx: WorkerContext, sessionId: string, seqs: number[]): Promise<Set<number>> {
  const undecided = new Set(seqs);
  const missing = new Set<number>();
  const key = eventStreamKey(ctx.queue.layout, sessionId);
  let end = '+';
  let page = FIRST_PAGE;
  /** The envelope `seq` of the oldest entry read: 1 when the stream's first entry is still on it. */
  let oldest: number | null = null;
  let whole = false;
  for (let scanned = 0; scanned < SCAN_LIMIT && undecided.size > 0; page = Math.min(MAX_PAGE, page * 2)) {
    const entries = (await ctx.redis.xrevrange(key, end, '-', 'COUNT', page)) as RawStreamEntry[];
    for (const entry of entries) {
      const event = parseStreamEntry(sessionId, entry);
      oldest = event.data.seq;
      const seq = event.data.inputSeq;
      if (seq === null || !undecided.has(seq)) continue;
      undecided.delete(seq);
      if (event.type !== 'input_finished') missing.add(seq);
    }
    if (entries.length < page) {
      whole = oldest === null ? (await ctx.redis.exists(eventSeqKey(ctx.queue.layout, sessionId))) === 0 : oldest === 1;
      break;
    }
    scanned += entries.length;
    end = `(${entries.at(-1)![0]}`;
  }
  if (whole) for (const seq of undecided) missing.add(seq);
  return missing;
}
