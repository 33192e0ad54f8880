import { useState, type FormEvent } from 'react';
import { api, ApiError, sessionPath } from './api';
import type { Interaction } from './types';

function message(error: unknown): string {
  return error instanceof ApiError ? `${error.code}: ${error.message}` : String(error);
}

/** Sends a message as a new input, and cancels what runs. */
export function Composer({ sessionId, canCancel, onDone }: { sessionId: string; canCancel: boolean; onDone: () => void }) {
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const send = async (event: FormEvent): Promise<void> => {
    event.preventDefault();
    if (text.trim() === '') return;
    setBusy(true);
    try {
      await api('POST', sessionPath(sessionId, '/inputs'), { input: text, inputId: crypto.randomUUID() });
      setText('');
      setError(null);
      onDone();
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  };
  const cancel = async (): Promise<void> => {
    try {
      await api('POST', sessionPath(sessionId, '/cancel'));
      setError(null);
      onDone();
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <form className="composer" onSubmit={(event) => void send(event)}>
      <textarea
        rows={2}
        placeholder="Send a message…"
        value={text}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) void send(event);
        }}
        data-testid="composer-input"
      />
      <div className="composer-buttons">
        <button type="submit" disabled={busy || text.trim() === ''} data-testid="composer-send">
          Send
        </button>
        <button type="button" className="danger" disabled={!canCancel} onClick={() => void cancel()} data-testid="cancel-button">
          Cancel
        </button>
      </div>
      {error !== null && (
        <p className="error" data-testid="action-error">
          {error}
        </p>
      )}
    </form>
  );
}

/** A `request_user_input` question: its options as buttons, or a free-text answer. */
export function QuestionBox({ sessionId, question, onDone }: { sessionId: string; question: Interaction; onDone: (interactionId: string) => void }) {
  const [value, setValue] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = async (answer: string): Promise<void> => {
    try {
      await api('POST', sessionPath(sessionId, '/submit'), { interactionId: question.interactionId, value: answer });
      setError(null);
      onDone(question.interactionId);
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <div className="question" data-testid="question" data-interaction-id={question.interactionId}>
      <div className="meta">The agent asks</div>
      <p data-testid="question-prompt">{question.prompt}</p>
      {question.options !== null && question.options.length > 0 && (
        <div className="options">
          {question.options.map((option) => (
            <button key={option} type="button" onClick={() => void submit(option)} data-testid="question-option">
              {option}
            </button>
          ))}
        </div>
      )}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (value.trim() !== '') void submit(value);
        }}
      >
        <input value={value} onChange={(event) => setValue(event.target.value)} placeholder="Your answer" data-testid="question-answer" />
        <button type="submit" data-testid="question-submit">
          Answer
        </button>
      </form>
      {error !== null && <p className="error">{error}</p>}
    </div>
  );
}
