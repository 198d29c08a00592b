/**
 * The dashboard: sign in (an account's email and password, or an API key), then the view of
 * the key's tenant kind. Every figure comes from the /v1 API with that key, so the page sees
 * exactly what the key's scopes allow. The live views (approvals, receipts, transactions, wallets,
 * sales, payouts) reload as the event feed brings their events (feed.ts); everything reloads on
 * "Refresh" and every 30 seconds.
 */
import { useCallback, useEffect, useMemo, useState } from 'react';
import { api, ApiError } from './api.js';
import { clearSession, loadSession, saveSession, type Session } from './session.js';
import { SignIn } from './components/SignIn.js';
import { Problem } from './components/common.js';
import { WorkspaceView } from './views/Workspace.js';
import { ProviderView } from './views/Provider.js';
import { OperatorView } from './views/Operator.js';
import { useEventFeed, type Feed } from './feed.js';
import type { Whoami } from './types.js';

const AUTO_REFRESH_MS = 30_000;

export function App() {
  const [session, setSession] = useState<Session | null>(() => loadSession());
  const [me, setMe] = useState<Whoami>();
  const [error, setError] = useState<unknown>();
  const [version, setVersion] = useState(0);
  const client = useMemo(() => api(session?.key ?? null), [session]);
  const refresh = useCallback(() => setVersion((v) => v + 1), []);
  const feed = useEventFeed(client, Boolean(me));

  useEffect(() => {
    if (!session) return;
    let live = true;
    setMe(undefined);
    client.get<Whoami>('/v1/whoami').then(
      (w) => live && (setMe(w), setError(undefined)),
      (e: unknown) => {
        if (!live) return;
        // a key that no longer works (revoked, expired) signs the page out
        if (e instanceof ApiError && e.status === 401) {
          clearSession();
          setSession(null);
        }
        setError(e);
      },
    );
    return () => {
      live = false;
    };
  }, [client, session]);

  useEffect(() => {
    if (!me) return;
    const t = setInterval(refresh, AUTO_REFRESH_MS);
    return () => clearInterval(t);
  }, [me, refresh]);

  const signIn = (s: Session) => {
    saveSession(s);
    setError(undefined);
    setSession(s);
  };

  const signOut = async () => {
    // a key this page minted by logging in is revoked; a key pasted in is left alone (an agent may use it)
    if (session?.loginKeyId) await client.post(`/v1/auth/keys/${encodeURIComponent(session.loginKeyId)}/revoke`).catch(() => undefined);
    clearSession();
    setMe(undefined);
    setSession(null);
  };

  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">agentpay</span>
        {me ? (
          <div className="who">
            <span>
              {me.tenant.name} <span className="muted">({me.tenant.kind})</span>
            </span>
            <LiveState feed={feed} />
            <button type="button" onClick={refresh}>
              Refresh
            </button>
            <button type="button" onClick={() => void signOut()}>
              Sign out
            </button>
          </div>
        ) : null}
      </header>
      <main id="main" tabIndex={-1}>
        {!session ? (
          <SignIn onSignedIn={signIn} error={error} />
        ) : !me ? (
          error ? <Problem error={error} /> : <p aria-live="polite">Loading…</p>
        ) : me.tenant.kind === 'workspace' ? (
          <WorkspaceView client={client} version={version} feed={feed} onChanged={refresh} />
        ) : me.tenant.kind === 'provider' ? (
          <ProviderView client={client} version={version} feed={feed} me={me} />
        ) : (
          <OperatorView client={client} version={version} feed={feed} onChanged={refresh} />
        )}
      </main>
    </>
  );
}

/** Whether the page follows the event feed, in the header (announced politely when it changes). */
function LiveState({ feed }: { feed: Feed }) {
  const text = feed.state === 'following' ? 'live' : feed.state === 'refused' ? 'not live' : '';
  const title = feed.state === 'following'
    ? `following the event feed (GET /v1/events)${feed.last ? `; last: ${feed.last.type} ${feed.last.createdAt}` : ''}`
    : feed.state === 'refused' ? 'this key cannot read the event feed (it needs rail:read); the page reloads every 30 seconds' : '';
  return (
    <span className={`live live-${feed.state}`} role="status" title={title} data-feed={feed.state}>
      {text}
    </span>
  );
}
