import { useState, type FormEvent } from 'react';

/** The Bearer token, typed once and kept in sessionStorage (this tab only). */
export function TokenBox({ token, onSave }: { token: string; onSave: (token: string) => void }) {
  const [value, setValue] = useState(token);
  const submit = (event: FormEvent): void => {
    event.preventDefault();
    onSave(value);
  };
  return (
    <form className="token" onSubmit={submit} data-testid="token-form">
      <input
        type="password"
        placeholder="Bearer token"
        autoComplete="off"
        value={value}
        onChange={(event) => setValue(event.target.value)}
        data-testid="token-input"
      />
      <button type="submit" data-testid="token-save">
        {token === '' ? 'Use token' : 'Change'}
      </button>
      {token !== '' && (
        <button
          type="button"
          className="secondary"
          onClick={() => {
            setValue('');
            onSave('');
          }}
        >
          Forget
        </button>
      )}
    </form>
  );
}
