/**
 * Capability names for labels: `GET /v1/capabilities/:id`, once per id for the page's life
 * (a name rarely changes; Refresh of the whole page fetches again). An id the key may not
 * read stays an id.
 */
import { useEffect, useState } from 'react';
import type { Api } from './api.js';
import type { Capability } from './types.js';

const cache = new Map<string, Promise<string | null>>();

function nameOf(client: Api, id: string): Promise<string | null> {
  let p = cache.get(id);
  if (!p) {
    p = client.get<{ capability: Capability }>(`/v1/capabilities/${encodeURIComponent(id)}`).then(
      (d) => d.capability.name,
      () => null,
    );
    cache.set(id, p);
  }
  return p;
}

/** id -> name for the given ids, filled in as the names arrive. */
export function useCapabilityNames(client: Api, ids: readonly string[]): ReadonlyMap<string, string> {
  const [names, setNames] = useState<ReadonlyMap<string, string>>(new Map());
  const key = [...new Set(ids)].sort().join(',');
  useEffect(() => {
    let live = true;
    const list = key ? key.split(',') : [];
    void Promise.all(list.map(async (id) => [id, await nameOf(client, id)] as const)).then((pairs) => {
      if (!live) return;
      const m = new Map<string, string>();
      for (const [id, name] of pairs) if (name) m.set(id, name);
      setNames(m);
    });
    return () => {
      live = false;
    };
  }, [client, key]);
  return names;
}

/** A capability as a label: its name, else its id. */
export const capabilityLabel = (names: ReadonlyMap<string, string>, id: string): string => names.get(id) ?? id;
