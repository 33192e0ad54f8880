import { useState } from 'react';
import { Composer, QuestionBox } from './Actions';
import { Conversation } from './Conversation';
import { ChildrenList, InputsTable, RawEvents, SessionFacts, TimersList } from './Panels';
import { linkClick } from './router';
import type { Interaction, Me } from './types';
import { useSession } from './use-session';

type Tab = 'conversation' | 'raw';

/** One session: its conversation (history, then live), actions, inputs, children, timers and raw events. */
export function SessionPage({ sessionId, me }: { sessionId: string; me: Me }) {
  const data = useSession(sessionId);
  const [tab, setTab] = useState<Tab>('conversation');
  const [answered, setAnswered] = useState<Set<string>>(() => new Set());
  const { session, live } = data;
  const canWrite = me.scope !== 'read';
  const question = pendingQuestion(data.session, live.question, answered);
  const running = session?.status === 'running' || data.inputs.some((i) => i.status === 'running' || i.status === 'pending' || i.status === 'waiting');
  return (
    <section className="session" data-testid="session-page" data-session-id={sessionId}>
      <nav className="crumbs">
        <a href="/" onClick={linkClick('/')} data-testid="back-link">
          Sessions
        </a>{' '}
        / <strong data-testid="session-id">{sessionId}</strong>
      </nav>
      {data.error !== null && (
        <p className="error" data-testid="session-error">
          {data.error}
        </p>
      )}
      <div className="layout">
        <div className="main-col">
          <div className="tabs">
            <button type="button" className={tab === 'conversation' ? 'active' : ''} onClick={() => setTab('conversation')} data-testid="tab-conversation">
              Conversation
            </button>
            <button type="button" className={tab === 'raw' ? 'active' : ''} onClick={() => setTab('raw')} data-testid="tab-raw">
              Raw events ({live.events.length})
            </button>
          </div>
          {tab === 'conversation' ? <Conversation messages={data.messages} live={live} /> : <RawEvents events={live.events} />}
          {canWrite && question !== null && (
            <QuestionBox sessionId={sessionId} question={question} onDone={(id) => (setAnswered(new Set(answered).add(id)), data.refresh())} />
          )}
          {canWrite && <Composer sessionId={sessionId} canCancel={running} onDone={data.refresh} />}
        </div>
        <aside className="side-col">
          {session !== null && <SessionFacts session={session} live={live} connection={data.connection} />}
          <h3>Inputs</h3>
          <InputsTable inputs={data.inputs} live={live} />
          <h3>Child sessions</h3>
          <ChildrenList children={data.children} live={live} />
          <h3>Timers</h3>
          <TimersList timers={data.timers} live={live} />
        </aside>
      </div>
    </section>
  );
}

/** The open question: the live one, else the one the session's pending state holds while it waits. */
function pendingQuestion(session: ReturnType<typeof useSession>['session'], liveQuestion: Interaction | null, answered: Set<string>): Interaction | null {
  const fromSession = session?.status === 'waiting_for_input' ? (session.pending?.interactions?.find((i) => !answered.has(i.interactionId)) ?? null) : null;
  if (liveQuestion !== null && !answered.has(liveQuestion.interactionId)) return liveQuestion;
  return fromSession;
}
