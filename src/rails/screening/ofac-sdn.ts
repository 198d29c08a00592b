/**
 * Sanctions screening against OFAC's SDN list in its published CSV form (`sdn.csv` of the
 * "SDN List - CSV" download: one row per entry, no header, twelve fields
 * `ent_num, SDN_Name, SDN_Type, Program, Title, Call_Sign, Vess_type, Tonnage, GRT,
 * Vess_flag, Vess_owner, Remarks`, fields in double quotes where needed, `-0-` for none).
 * OFAC lists the digital currency addresses of an entry in its Remarks as
 * `Digital Currency Address - <ticker> <address>;` (e.g. `- ETH 0x…`, `- USDC 0x…`,
 * `- XBT bc1…`): those are what a payout destination is screened against. EVM addresses
 * (0x + 40 hex) compare without letter case; others exactly.
 *
 * The file is read when first needed and again whenever its modification time or size
 * changes (checked on each screening; the operator replaces the file with a fresh download).
 * A missing or unreadable file, one with no entry, or one older than `maxAgeMs` by its
 * modification time on the injected clock makes screening unavailable (RailUnavailable:
 * payouts answer 503 TREASURY_UNAVAILABLE) rather than waving payouts through.
 */
import { readFile, stat } from 'node:fs/promises';
import type { Clock } from '../../core/clock.js';
import { RailUnavailable, type AdapterStatus, type ScreeningService } from '../../domain/rails/adapters.js';

export interface SdnEntry {
  entNum: string;
  name: string;
  type: string;
  programs: string;
  /** `<ticker> <address>` pairs from the remarks */
  addresses: { ticker: string; address: string }[];
}

export interface OfacScreeningOptions {
  /** the sdn.csv file */
  path: string;
  clock: Clock;
  /** the list is refused as stale when its file is older than this (by mtime); default 7 days */
  maxAgeMs?: number;
}

export const DEFAULT_SDN_MAX_AGE_MS = 7 * 24 * 60 * 60_000;
const EVM = /^0x[0-9a-fA-F]{40}$/;
const ADDRESS_REMARK = /Digital Currency Address - ([A-Za-z0-9]+)[ :]+([A-Za-z0-9]+)/g;

/** The address as it is compared: EVM addresses in lower case, others as they are. */
export const addressKey = (a: string) => (EVM.test(a) ? a.toLowerCase() : a);

/** Parses sdn.csv text; throws when a row is not twelve fields (a file that is not the SDN CSV). */
export function parseSdnCsv(text: string): SdnEntry[] {
  const rows = parseCsv(text.replace(/\x1a/g, ''));
  const out: SdnEntry[] = [];
  rows.forEach((r, i) => {
    if (r.length === 1 && r[0]!.trim() === '') return;
    if (r.length !== 12) throw new Error(`row ${i + 1} has ${r.length} fields; sdn.csv rows have 12 (ent_num … Remarks)`);
    const v = (s: string) => (s.trim() === '-0-' ? '' : s.trim());
    if (!/^\d+$/.test(v(r[0]!))) throw new Error(`row ${i + 1}: ent_num ${JSON.stringify(r[0])} is not a number`);
    const addresses = [...v(r[11]!).matchAll(ADDRESS_REMARK)].map((m) => ({ ticker: m[1]!, address: m[2]! }));
    out.push({ entNum: v(r[0]!), name: v(r[1]!), type: v(r[2]!), programs: v(r[3]!), addresses });
  });
  return out;
}

/** RFC 4180 CSV: commas, double-quoted fields with "" for a quote, CRLF or LF. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++; } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(field); field = ''; } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field); rows.push(row); row = []; field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) { row.push(field); rows.push(row); }
  return rows;
}

interface Loaded {
  mtimeMs: number;
  size: number;
  entries: number;
  byAddress: Map<string, SdnEntry>;
}

export class OfacSdnScreening implements ScreeningService {
  private loaded: Loaded | undefined;
  private readonly maxAgeMs: number;
  /** how many times the file was (re)read: tests see the reload */
  loads = 0;

  constructor(private o: OfacScreeningOptions) {
    this.maxAgeMs = o.maxAgeMs ?? DEFAULT_SDN_MAX_AGE_MS;
  }

  async screen(destination: string): Promise<'clear' | 'sanctioned'> {
    const list = await this.current();
    return list.byAddress.has(addressKey(destination.trim())) ? 'sanctioned' : 'clear';
  }

  /** The entry a destination matches, if any (for an operator's question "why"). */
  async match(destination: string): Promise<SdnEntry | undefined> {
    return (await this.current()).byAddress.get(addressKey(destination.trim()));
  }

  /** For `rail providers`: operational with the list's size and age, or down with why. */
  async health(): Promise<{ status: AdapterStatus; detail: string }> {
    try {
      const l = await this.current();
      const ageH = Math.floor((this.o.clock.now() - l.mtimeMs) / 3_600_000);
      return { status: 'operational', detail: `${l.entries} entries, ${l.byAddress.size} addresses, list ${ageH} h old` };
    } catch (e) {
      return { status: 'down', detail: (e as Error).message };
    }
  }

  private async current(): Promise<Loaded> {
    let st;
    try {
      st = await stat(this.o.path);
    } catch (e) {
      throw new RailUnavailable('screening', `the sanctions list ${this.o.path} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); download OFAC's sdn.csv there`);
    }
    const age = this.o.clock.now() - st.mtimeMs;
    if (age > this.maxAgeMs) {
      throw new RailUnavailable('screening', `the sanctions list ${this.o.path} is stale: updated ${new Date(st.mtimeMs).toISOString()}, more than ${Math.round(this.maxAgeMs / 3_600_000)} h ago; download a fresh sdn.csv`);
    }
    if (this.loaded && this.loaded.mtimeMs === st.mtimeMs && this.loaded.size === st.size) return this.loaded;
    let entries: SdnEntry[];
    try {
      entries = parseSdnCsv(await readFile(this.o.path, 'latin1'));
    } catch (e) {
      this.loaded = undefined;
      throw new RailUnavailable('screening', `the sanctions list ${this.o.path} is not OFAC's sdn.csv: ${(e as Error).message}`);
    }
    if (entries.length === 0) {
      this.loaded = undefined;
      throw new RailUnavailable('screening', `the sanctions list ${this.o.path} has no entry; download OFAC's sdn.csv there`);
    }
    const byAddress = new Map<string, SdnEntry>();
    for (const e of entries) for (const a of e.addresses) byAddress.set(addressKey(a.address), e);
    this.loads += 1;
    this.loaded = { mtimeMs: st.mtimeMs, size: st.size, entries: entries.length, byAddress };
    return this.loaded;
  }
}
