import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { api, ApiError, sessionPath, withQuery } from './api';
import { coalesce } from './coalesce';
import { followEvents } from './follow-events';
import { applyEvent, emptyLiveState, type LiveState } from './live-state';
import type { ChildLink, HistoryPage, InputRecord, SessionView, StoredMessage, StreamEvent, Timer } from './types';

export interface SessionData {
  session: SessionView | null;
  messages: StoredMessage[];
  inputs: InputRecord[];
  timers: Timer[];
  children: ChildLink[];
  live: LiveState;
  connection: string;
  error: string | null;
  /** Reloads the session view and its inputs now (after a send, cancel or submit). */
  refresh: () => void;
}

const EVENT_RELOADS: Record<string, ReadonlyArray<'history' | 'inputs' | 'session' | 'children' | 'timers'>> = {
  message_appended: ['history'],
  input_accepted: ['inputs', 'session'],
  input_started: ['inputs', 'session'],
  input_resumed: ['inputs', 'session'],
  input_finished: ['inputs', 'session', 'history'],
  user_input_requested: ['session'],
  session_ended: ['session'],
  subagent_started: ['children'],
  subagent_finished: ['children'],
  timer_fired: ['timers', 'inputs'],
};

/**
 * Loads a session (view, history, inputs, timers, children), then follows its events from the view's
 * `eventCursor`. For a running input that cursor sits just before the input's first event, so the
 * replay rebuilds the answer streamed so far; messages are keyed by their seq, so nothing doubles.
 */
export function useSession(sessionId: string): SessionData {
  const [session, setSession] = useState<SessionView | null>(null);
  const [messages, setMessages] = useState<Map<number, StoredMessage>>(() => new Map());
  const [inputs, setInputs] = useState<InputRecord[]>([]);
  const [timers, setTimers] = useState<Timer[]>([]);
  const [children, setChildren] = useState<ChildLink[]>([]);
  const [connection, setConnection] = useState('loading');
  const [error, setError] = useState<string | null>(null);
  const [, setTick] = useState(0);
  const live = useRef<LiveState>(emptyLiveState());
  const lastSeq = useRef(0);

  const loaders = useMemo(() => {
    const path = (tail: string): string => sessionPath(sessionId, tail);
    const history = async (): Promise<void> => {
      const page: StoredMessage[] = [];
      for (;;) {
        const answer = await api<HistoryPage>('GET', withQuery(path('/history'), { afterSeq: lastSeq.current, limit: 200 }));
        page.push(...answer.messages);
        for (const message of answer.messages) lastSeq.current = Math.max(lastSeq.current, message.seq);
        if (answer.messages.length === 0 || answer.nextAfterSeq === null || answer.nextAfterSeq === undefined) break;
      }
      if (page.length === 0) return;
      setMessages((current) => {
        const next = new Map(current);
        for (const message of page) next.set(message.seq, message);
        return next;
      });
    };
    return {
      history,
      session: async () => setSession(await api<SessionView>('GET', path(''))),
      inputs: async () => setInputs((await api<{ inputs: InputRecord[] }>('GET', withQuery(path('/inputs'), { limit: 200 }))).inputs),
      timers: async () => setTimers(listOf<Timer>(await api<unknown>('GET', path('/timers')), 'timers')),
      children: async () => setChildren(listOf<ChildLink>(await api<unknown>('GET', path('/children')), 'children')),
    };
  }, [sessionId]);

  const triggers = useMemo(
    () => ({
      history: coalesce(loaders.history),
      session: coalesce(loaders.session),
      inputs: coalesce(loaders.inputs),
      timers: coalesce(loaders.timers),
      children: coalesce(loaders.children),
    }),
    [loaders],
  );

  useEffect(() => {
    const controller = new AbortController();
    live.current = emptyLiveState();
    lastSeq.current = 0;
    let frame: number | null = null;
    const redraw = (): void => {
      if (frame === null) frame = requestAnimationFrame(() => ((frame = null), setTick((n) => n + 1)));
    };
    const onEvent = (event: StreamEvent): void => {
      if (!applyEvent(live.current, event)) return;
      for (const name of EVENT_RELOADS[event.type] ?? []) triggers[name]();
      redraw();
    };
    void (async () => {
      try {
        const view = await api<SessionView>('GET', sessionPath(sessionId, ''), undefined, controller.signal);
        setSession(view);
        await loaders.history();
        await Promise.all([loaders.inputs(), loaders.timers().catch(() => undefined), loaders.children().catch(() => undefined)]);
        if (controller.signal.aborted) return;
        await followEvents({
          sessionId,
          after: view.eventCursor ?? '$',
          signal: controller.signal,
          onEvent,
          onGap: () => {
            triggers.history();
            triggers.inputs();
            triggers.session();
          },
          onConnection: (state, detail) => setConnection(detail === undefined ? state : `${state}: ${detail}`),
        });
      } catch (err) {
        if (controller.signal.aborted) return;
        setError(err instanceof ApiError ? `${err.code}: ${err.message}` : String(err));
        setConnection('closed');
      }
    })();
    return () => {
      controller.abort();
      if (frame !== null) cancelAnimationFrame(frame);
    };
  }, [sessionId, loaders, triggers]);

  const refresh = useCallback(() => {
    triggers.session();
    triggers.inputs();
  }, [triggers]);

  const sorted = useMemo(() => [...messages.values()].sort((a, b) => a.seq - b.seq), [messages]);
  return { session, messages: sorted, inputs, timers, children, live: live.current, connection, error, refresh };
}

/** Accepts either a bare array or `{ [key]: [...] }`. */
function listOf<T>(answer: unknown, key: string): T[] {
  if (Array.isArray(answer)) return answer as T[];
  if (typeof answer === 'object' && answer !== null) {
    const value = (answer as Record<string, unknown>)[key];
    if (Array.isArray(value)) return value as T[];
  }
  return [];
}
