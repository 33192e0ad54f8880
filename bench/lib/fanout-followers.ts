/**
 * The SSE fan-out bench's followers in child processes (`bench-child.ts`), so they do not share an
 * event loop (or CPU accounting) with the gateway or the producer. A child follows either a set of
 * gateway SSE streams (`GET /v1/sessions/:id/events`, one HTTP connection each) or, as the
 * reference, a set of Redis streams with `XREAD BLOCK` (one connection each, as a raw follower holds).
 *
 * Every event the producer writes carries its publish time on CLOCK_MONOTONIC (`monotonicMs`) as its
 * `text`; a follower takes the receive time when its chunk arrives. Only events stamped inside the
 * measuring window are timed and counted as `inWindow`, so the warm-up and the drain stay out.
 */
import { fileURLToPath } from 'node:url';
import { startBenchChild, type BenchChild } from './bench-child.js';

const ENTRY = fileURLToPath(new URL('./fanout-followers-main.ts', import.meta.url));

export type FollowerRequest =
  /** One SSE follower per entry of `sessionIds` (an id may repeat), `concurrency` connecting at once. */
  | { type: 'sse'; url: string; token: string; sessionIds: string[]; concurrency: number }
  /** One `XREAD BLOCK` follower, on a connection of its own, per entry of `streamKeys`. */
  | { type: 'xread'; redisUrl: string; streamKeys: string[]; concurrency: number }
  /** Events stamped in [from, to) (monotonic ms) are timed. */
  | { type: 'window'; from: number; to: number }
  | { type: 'counts' }
  | { type: 'report' };

export interface FollowerCounts {
  followers: number;
  /** Events received in all (stamped or not, warm-up included). */
  received: number;
  /** Events stamped inside the window that were received. */
  inWindow: number;
  gaps: number;
  /** Followers whose stream ended or failed while the bench ran. */
  ended: number;
}

export interface FollowerReport extends FollowerCounts {
  /** Delivery delay of each timed event, ms (publish stamp → chunk received), 3 decimals. */
  delays: number[];
}

export interface FollowerProcess {
  pid: number;
  open(request: Extract<FollowerRequest, { type: 'sse' | 'xread' }>): Promise<{ open: number; ms: number }>;
  window(from: number, to: number): Promise<void>;
  counts(): Promise<FollowerCounts>;
  report(): Promise<FollowerReport>;
  close(): Promise<void>;
}

export async function startFollowerProcess(name: string): Promise<FollowerProcess> {
  const child: BenchChild<unknown> = await startBenchChild<unknown>(ENTRY, {}, { name });
  const request = <Reply>(message: FollowerRequest, timeoutMs?: number) => child.request<Reply>(message, timeoutMs);
  return {
    pid: child.pid,
    open: (message) => request(message, 180_000),
    window: (from, to) => request({ type: 'window', from, to }),
    counts: () => request({ type: 'counts' }),
    report: () => request({ type: 'report' }),
    close: child.close,
  };
}
