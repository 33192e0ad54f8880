import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport, type UIMessage } from 'ai';
import { useState, type FormEvent } from 'react';
import { authHeaders, chatApi } from './gateway';

/** One message's parts as text: the answer, what the model thought, and each tool call with its state. */
function MessageParts({ message }: { message: UIMessage }) {
  return (
    <>
      {message.parts.map((part, index) => {
        if (part.type === 'text') return <p key={index}>{part.text}</p>;
        if (part.type === 'reasoning') return <p key={index} className="reasoning">{part.text}</p>;
        if (part.type.startsWith('tool-') && 'state' in part) {
          const output = part.state === 'output-available' ? JSON.stringify(part.output) : part.state === 'output-error' ? part.errorText : '…';
          return <pre key={index} className="tool">{`${part.type.slice(5)}(${JSON.stringify(part.input)}) → ${output}`}</pre>;
        }
        return null;
      })}
    </>
  );
}

/**
 * The chat itself. `resume: true` asks `GET /v1/chat/:id/stream` on mount, so a reload mid-answer
 * picks the running answer up from its start; `messages` are the ones loaded before.
 */
export function Chat({ id, initialMessages }: { id: string; initialMessages: UIMessage[] }) {
  const [transport] = useState(() => new DefaultChatTransport<UIMessage>({ api: chatApi, headers: authHeaders }));
  const { messages, sendMessage, status, error, stop } = useChat({ id, messages: initialMessages, transport, resume: true });
  const [input, setInput] = useState('');
  const busy = status === 'submitted' || status === 'streaming';

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const text = input.trim();
    if (text === '' || busy) return;
    void sendMessage({ text });
    setInput('');
  };

  return (
    <main>
      <h1>loopfleet chat</h1>
      <p className="session">session {id}</p>
      {messages.map((message) => (
        <section key={message.id} className={message.role}>
          <strong>{message.role === 'user' ? 'You' : 'Agent'}</strong>
          <MessageParts message={message} />
        </section>
      ))}
      {error && <p className="error">{error.message}</p>}
      <form onSubmit={submit}>
        <input value={input} onChange={(event) => setInput(event.target.value)} placeholder="Say something" autoFocus />
        {busy ? <button type="button" onClick={() => void stop()}>Stop</button> : <button type="submit">Send</button>}
      </form>
    </main>
  );
}
