import type { UIMessage } from 'ai';
import { useEffect, useState } from 'react';
import { Chat } from './chat';
import { chatIdFromLocation, loadMessages } from './gateway';

/** Loads the chat's earlier messages first, then mounts the chat with them (`useChat` takes them once). */
export function App() {
  const [id] = useState(chatIdFromLocation);
  const [loaded, setLoaded] = useState<UIMessage[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const controller = new AbortController();
    loadMessages(id, controller.signal).then(setLoaded, (cause: unknown) => {
      if (!controller.signal.aborted) setError(cause instanceof Error ? cause.message : String(cause));
    });
    return () => controller.abort();
  }, [id]);

  if (error !== null) return <p className="error">Could not load the chat: {error}</p>;
  if (loaded === null) return <p>Loading…</p>;
  return <Chat id={id} initialMessages={loaded} />;
}
