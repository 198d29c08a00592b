/**
 * Who is signed in: an API key kept in this tab's sessionStorage (gone when the tab
 * closes), never in a cookie, so no other site can make the browser use it.
 *
 * `agentpay dev` prints a URL whose fragment holds the dev workspace's key
 * (`/dashboard/#key=…`): a fragment is never sent to the gateway, so no request line or
 * access log carries it; the page moves it to sessionStorage and wipes it from the
 * address bar and the history entry at once.
 */
export interface Session {
  key: string;
  /** the id of a key this page minted by logging in: signing out revokes it */
  loginKeyId?: string;
}

const STORAGE = 'agentpay.dashboard.session';

export function loadSession(): Session | null {
  const fromFragment = takeKeyFromFragment();
  if (fromFragment) {
    saveSession(fromFragment);
    return fromFragment;
  }
  try {
    const raw = sessionStorage.getItem(STORAGE);
    const s = raw ? (JSON.parse(raw) as Session) : null;
    return s && typeof s.key === 'string' && s.key ? s : null;
  } catch {
    return null;
  }
}

export function saveSession(s: Session): void {
  sessionStorage.setItem(STORAGE, JSON.stringify(s));
}

export function clearSession(): void {
  sessionStorage.removeItem(STORAGE);
}

function takeKeyFromFragment(): Session | null {
  const hash = window.location.hash;
  if (!hash.startsWith('#')) return null;
  const params = new URLSearchParams(hash.slice(1));
  const key = params.get('key');
  if (!key) return null;
  window.history.replaceState(null, '', window.location.pathname + window.location.search);
  return { key };
}
