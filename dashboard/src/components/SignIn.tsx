/**
 * Signing in: with an account (POST /v1/accounts/login mints a 30-day key, which signing
 * out revokes), or with an API key pasted in (an operator or provider key, a dev key).
 */
import { useId, useState, type FormEvent } from 'react';
import { api } from '../api.js';
import type { Session } from '../session.js';
import { Problem } from './common.js';

interface LoginResult {
  apiKey: { id: string; key: string };
}

export function SignIn({ onSignedIn, error: outer }: { onSignedIn: (s: Session) => void; error?: unknown }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(outer);
  const ids = { email: useId(), password: useId(), key: useId() };

  const login = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    try {
      const r = await api(null).post<LoginResult>('/v1/accounts/login', { email, password });
      onSignedIn({ key: r.apiKey.key, loginKeyId: r.apiKey.id });
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  const useKey = (e: FormEvent) => {
    e.preventDefault();
    if (key.trim()) onSignedIn({ key: key.trim() });
  };

  return (
    <div className="signin">
      <h1>Sign in to the agentpay dashboard</h1>
      <Problem error={error} />
      <form className="card" onSubmit={(e) => void login(e)} aria-label="Sign in with your account">
        <h2>With your account</h2>
        <label htmlFor={ids.email}>Email</label>
        <input id={ids.email} type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
        <label htmlFor={ids.password}>Password</label>
        <input id={ids.password} type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <form className="card" onSubmit={useKey} aria-label="Sign in with an API key">
        <h2>With an API key</h2>
        <label htmlFor={ids.key}>API key</label>
        <input id={ids.key} type="password" autoComplete="off" spellCheck={false} required value={key} onChange={(e) => setKey(e.target.value)} />
        <p className="muted">Kept in this tab only, until you sign out or close it. `agentpay dev` prints a link that signs its workspace in.</p>
        <button type="submit">Use this key</button>
      </form>
    </div>
  );
}
