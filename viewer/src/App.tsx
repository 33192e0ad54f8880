import { useCallback, useEffect, useState } from 'react';
import { api, ApiError, getToken, setToken } from './api';
import { linkClick, useRoute } from './router';
import { SessionList } from './SessionList';
import { SessionPage } from './SessionPage';
import { TokenBox } from './TokenBox';
import type { Me } from './types';

/** The viewer: a header with the token box, then the list or a session page. */
export function App() {
  const route = useRoute();
  const [token, setTokenState] = useState(getToken);
  const [me, setMe] = useState<Me | null>(null);
  const [authError, setAuthError] = useState<string | null>(null);
  const [authOff, setAuthOff] = useState(false);

  useEffect(() => {
    const controller = new AbortController();
    api<Me>('GET', '/v1/me', undefined, controller.signal).then(
      (answer) => {
        setMe(answer);
        setAuthError(null);
        if (token === '') setAuthOff(true);
      },
      (error: unknown) => {
        if (controller.signal.aborted) return;
        setMe(null);
        setAuthError(error instanceof ApiError ? `${error.code}: ${error.message}` : String(error));
      },
    );
    return () => controller.abort();
  }, [token]);

  const saveToken = useCallback((value: string) => {
    setToken(value.trim());
    setTokenState(value.trim());
  }, []);

  const ready = me !== null;
  return (
    <div className="app">
      <header className="top">
        <a className="brand" href="/" onClick={linkClick('/')} data-testid="home-link">
          loopfleet
        </a>
        {me !== null && (
          <span className="who" data-testid="whoami">
            {me.tenant ?? 'all tenants'} · {me.scope}
            {me.subject !== null && me.subject !== undefined ? ` · ${me.subject}` : ''}
          </span>
        )}
        {!authOff && <TokenBox token={token} onSave={saveToken} />}
      </header>
      {authError !== null && (
        <p className="error" data-testid="auth-error">
          {authError}
        </p>
      )}
      <main>
        {!ready ? (
          <p className="muted">{authError === null ? 'Connecting…' : 'Enter a token to look at sessions.'}</p>
        ) : route.page === 'list' ? (
          <SessionList me={me} />
        ) : (
          <SessionPage key={route.sessionId} sessionId={route.sessionId} me={me} />
        )}
      </main>
    </div>
  );
}
