/**
 * The /v1 API as the page calls it: same origin, the signed-in key in `x-api-key`, JSON
 * both ways, and the error envelope (`{error: {code, message}}`) turned into an ApiError.
 * The page holds no power of its own: what a key's scopes refuse, the page cannot do.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface Api {
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body?: Record<string, unknown>): Promise<T>;
}

async function call<T>(method: 'GET' | 'POST', path: string, key: string | null, body?: Record<string, unknown>): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (key) headers['x-api-key'] = key;
  if (method === 'POST') headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, { method, headers, credentials: 'omit', cache: 'no-store', ...(method === 'POST' ? { body: JSON.stringify(body ?? {}) } : {}) });
  } catch (e) {
    throw new ApiError(0, 'NETWORK', `the gateway did not answer (${(e as Error).message}); is it running?`);
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : {};
  } catch {
    throw new ApiError(res.status, 'BAD_RESPONSE', `the gateway answered ${res.status} with something that is not JSON`);
  }
  if (!res.ok) {
    const err = (parsed as { error?: { code?: string; message?: string } }).error;
    throw new ApiError(res.status, err?.code ?? 'HTTP_' + res.status, err?.message ?? `the gateway answered ${res.status}`);
  }
  return parsed as T;
}

export function api(key: string | null): Api {
  return {
    get: (path) => call('GET', path, key),
    post: (path, body) => call('POST', path, key, body),
  };
}

/** Every page of a cursor-paged list (`nextCursor` on a full page), up to `maxPages`. */
export async function allPages<T>(a: Api, path: string, field: string, maxPages = 10): Promise<{ items: T[]; complete: boolean }> {
  const items: T[] = [];
  let after: string | undefined;
  for (let i = 0; i < maxPages; i++) {
    const sep = path.includes('?') ? '&' : '?';
    const page = await a.get<Record<string, unknown> & { nextCursor?: string }>(after ? `${path}${sep}after=${encodeURIComponent(after)}` : path);
    items.push(...((page[field] as T[] | undefined) ?? []));
    if (!page.nextCursor) return { items, complete: true };
    after = page.nextCursor;
  }
  return { items, complete: false };
}
