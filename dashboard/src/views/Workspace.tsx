/**
 * A workspace: its wallets and balances, its open payment sessions with what they spent, spend per day and per capability (from its
 * receipts), the purchases a policy holds for a person (approve or deny here), its receipts
 * (each verified in the page), its transactions with their ledger entries, and its policies.
 */
import { useEffect, useState } from 'react';
import { allPages, type Api } from '../api.js';
import { currenciesOf, lastDays, spendPerCapability, spendPerDay, transactionsOf } from '../aggregate.js';
import { BarChart } from '../components/BarChart.js';
import { Badge, Problem, Section, Table } from '../components/common.js';
import { money, when } from '../money.js';
import { verifyReceipt, type Verdict } from '../verify.js';
import { liveKey, useLoad } from '../useLoad.js';
import type { Feed } from '../feed.js';
import { capabilityLabel, useCapabilityNames } from '../names.js';
import type { Approval, Balance, LedgerEntry, Policy, Receipt, Session, Wallet } from '../types.js';

interface Props {
  client: Api;
  version: number;
  /** the event feed: approvals reload on approval events, money on the others */
  feed: Feed;
  onChanged: () => void;
}

export const SPEND_DAYS = 14;

export function WorkspaceView({ client, version, feed, onChanged }: Props) {
  const receipts = useLoad(async () => {
    const [page, health] = await Promise.all([allPages<Receipt>(client, '/v1/receipts?limit=200', 'receipts'), client.get<{ time: string }>('/health')]);
    return { ...page, now: health.time };
  }, liveKey(version, feed.money));
  const names = useCapabilityNames(client, receipts.data?.items.map((r) => r.capabilityId) ?? []);
  return (
    <>
      <nav aria-label="Sections" className="sections">
        <a href="#approvals">Approvals</a> <a href="#wallets">Wallets</a> <a href="#sessions">Sessions</a> <a href="#spend">Spend</a> <a href="#receipts">Receipts</a>{' '}
        <a href="#transactions">Transactions</a> <a href="#policies">Policies</a>
      </nav>
      <Approvals client={client} version={version} feed={feed} onChanged={onChanged} />
      <Wallets client={client} version={version} feed={feed} />
      <Sessions client={client} version={version} feed={feed} />
      <Section id="spend" title="Spend">
        <Problem error={receipts.error} />
        {receipts.data ? <Spend receipts={receipts.data.items} now={receipts.data.now} complete={receipts.data.complete} names={names} /> : null}
      </Section>
      <Section id="receipts" title="Receipts">
        <Problem error={receipts.error} />
        {receipts.data ? <Receipts client={client} receipts={receipts.data.items} names={names} /> : null}
      </Section>
      <Transactions client={client} version={version} feed={feed} receipts={receipts.data?.items ?? []} names={names} />
      <Policies client={client} version={version} />
    </>
  );
}

function Approvals({ client, version, feed, onChanged }: Props) {
  const { data, error } = useLoad(() => client.get<{ approvals: Approval[] }>('/v1/approvals'), liveKey(version, feed.approvals));
  const [busy, setBusy] = useState<string>();
  const [actionError, setActionError] = useState<unknown>();
  const [done, setDone] = useState<string>();
  const decide = async (a: Approval, action: 'approve' | 'deny') => {
    setBusy(a.id);
    setActionError(undefined);
    try {
      await client.post(`/v1/approvals/${encodeURIComponent(a.id)}/${action}`, {});
      setDone(`${a.id} ${action === 'approve' ? 'approved' : 'denied'}: the agent's next try ${action === 'approve' ? 'pays once' : 'is refused'}.`);
      onChanged();
    } catch (e) {
      setActionError(e);
    } finally {
      setBusy(undefined);
    }
  };
  const approvals = data?.approvals ?? [];
  const names = useCapabilityNames(client, approvals.map((a) => a.capabilityId));
  const pending = approvals.filter((a) => a.status === 'pending');
  const decided = approvals.filter((a) => a.status !== 'pending').slice(0, 20);
  return (
    <Section id="approvals" title={`Approvals${pending.length ? ` (${pending.length} pending)` : ''}`}>
      <Problem error={error ?? actionError} />
      <p aria-live="polite" className="muted">
        {done}
      </p>
      {pending.length === 0 ? (
        <p className="muted">No purchase is waiting for a person.</p>
      ) : (
        <ul className="approvals">
          {pending.map((a) => (
            <li key={a.id} className="approval" aria-labelledby={`${a.id}-what`}>
              <p id={`${a.id}-what`}>
                <strong>{money(a.amountMinor, a.currency)}</strong> for {names.get(a.capabilityId) ?? ''} <code>{a.capabilityId}</code> by agent <code>{a.agentId}</code>
              </p>
              <p className="muted">
                held by the rule <code>{a.rule}</code> · wallet <code>{a.walletId}</code> · {when(a.createdAt)} · <code>{a.id}</code>
              </p>
              <div className="actions">
                <button type="button" className="primary" disabled={busy === a.id} aria-describedby={`${a.id}-what`} onClick={() => void decide(a, 'approve')}>
                  Approve
                </button>
                <button type="button" disabled={busy === a.id} aria-describedby={`${a.id}-what`} onClick={() => void decide(a, 'deny')}>
                  Deny
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
      {decided.length ? (
        <details>
          <summary>Decided ({decided.length})</summary>
          <Table label="Decided approvals" head={['Approval', 'Amount', 'Capability', 'Decision', 'By', 'Used']} count={decided.length} empty="">
            {decided.map((a) => (
              <tr key={a.id}>
                <td><code>{a.id}</code></td>
                <td className="num">{money(a.amountMinor, a.currency)}</td>
                <td><code>{a.capabilityId}</code></td>
                <td><Badge tone={a.status === 'approved' ? 'good' : 'bad'}>{a.status}</Badge></td>
                <td>{a.resolvedBy ?? '-'}</td>
                <td>{a.usedAt ? when(a.usedAt) : 'not yet'}</td>
              </tr>
            ))}
          </Table>
        </details>
      ) : null}
    </Section>
  );
}

function Wallets({ client, version, feed }: Omit<Props, 'onChanged'>) {
  const { data, error } = useLoad(async () => {
    const { wallets } = await client.get<{ wallets: Wallet[] }>('/v1/wallets');
    const balances = await Promise.all(wallets.map((w) => client.get<Balance>(`/v1/wallets/${encodeURIComponent(w.id)}/balance`)));
    return wallets.map((w, i) => ({ ...w, balance: balances[i]! }));
  }, liveKey(version, feed.money));
  return (
    <Section id="wallets" title="Wallets">
      <Problem error={error} />
      {data ? (
        <Table label="Wallets" head={['Wallet', 'Owner', 'Balance', 'Available', 'Status']} count={data.length} empty="No wallet yet: agentpay wallets create.">
          {data.map((w) => (
            <tr key={w.id}>
              <td><code>{w.id}</code></td>
              <td>{w.ownerType} {w.ownerId}</td>
              <td className="num">{money(w.balance.balanceMinor, w.balance.currency)}</td>
              <td className="num">{money(w.balance.availableMinor, w.balance.currency)}</td>
              <td>{w.frozen ? <Badge tone="bad">frozen</Badge> : <Badge tone="plain">{w.status}</Badge>}</td>
            </tr>
          ))}
        </Table>
      ) : null}
    </Section>
  );
}

/** The open payment sessions of the workspace's wallets (GET /v1/sessions?status=open): what each spent of its cap (the rest is held on the wallet). */
function Sessions({ client, version, feed }: Omit<Props, 'onChanged'>) {
  // reloaded as the event feed brings money events (the session events among them)
  const { data, error } = useLoad(() => client.get<{ sessions: Session[]; nextCursor: string | null }>('/v1/sessions?status=open&limit=100'), liveKey(version, feed.money));
  const sessions = data?.sessions ?? [];
  return (
    <Section id="sessions" title={`Open sessions${sessions.length ? ` (${sessions.length})` : ''}`}>
      <Problem error={error} />
      {data ? (
        <Table label="Open sessions" head={['Session', 'Wallet', 'Seller', 'Spent of cap', 'Expires']} count={sessions.length} empty="No open payment session: a buyer opens one on its first call to a seller that offers them.">
          {sessions.map((s) => (
            <tr key={s.id} data-session={s.id}>
              <td><code>{s.id}</code></td>
              <td><code>{s.walletId}</code></td>
              <td><code>{s.providerId}</code></td>
              <td className="num">
                {money(s.claimedMinor, s.currency)} <span className="muted">of {money(s.capMinor, s.currency)}</span>
              </td>
              <td>{when(s.expiresAt)}</td>
            </tr>
          ))}
        </Table>
      ) : null}
      {data?.nextCursor ? <p className="muted">The newest 100; the others are in the API (GET /v1/sessions) and the CLI (agentpay sessions list).</p> : null}
    </Section>
  );
}

function Spend({ receipts, now, complete, names }: { receipts: Receipt[]; now: string; complete: boolean; names: ReadonlyMap<string, string> }) {
  const days = lastDays(now, SPEND_DAYS);
  return (
    <>
      {currenciesOf(receipts).map((currency) => (
        <div key={currency} className="charts">
          <BarChart title={`Spend per day, last ${SPEND_DAYS} days (${currency})`} buckets={spendPerDay(receipts, days, currency)} format={(v) => money(v, currency)} short={(d) => d.slice(5)} empty="No spend in these days." />
          <BarChart title={`Spend per capability (${currency})`} buckets={spendPerCapability(receipts, currency).map((b) => ({ ...b, label: capabilityLabel(names, b.label) }))} format={(v) => money(v, currency)} short={(l) => (l.length > 16 ? l.slice(0, 15) + '…' : l)} empty="No spend yet." />
        </div>
      ))}
      {complete ? null : <p className="muted">Counted over the newest receipts only; older ones are in the API (GET /v1/receipts).</p>}
    </>
  );
}

function Receipts({ client, receipts, names }: { client: Api; receipts: Receipt[]; names: ReadonlyMap<string, string> }) {
  const shown = receipts.slice(0, 50);
  return (
    <Table label="Receipts" head={['Receipt', 'Time', 'Capability', 'Amount', 'Status', 'Signature']} count={shown.length} empty="No receipt yet: they come with paid calls.">
      {shown.map((r) => (
        <tr key={r.id} data-receipt={r.id}>
          <td><code>{r.id}</code></td>
          <td>{when(r.timestamp)}</td>
          <td>
            {names.get(r.capabilityId) ?? ''} <code>{r.capabilityId}</code>
          </td>
          <td className="num">{money(r.amount.amountMinor, r.amount.currency)}</td>
          <td><Badge tone={r.status === 'success' ? 'good' : 'bad'}>{r.status}</Badge></td>
          <td><ReceiptCheck client={client} receipt={r} /></td>
        </tr>
      ))}
    </Table>
  );
}

const VERDICT_TEXT: Record<Verdict, string> = { valid: 'verified', invalid: 'signature invalid', unknown_key: 'key unknown' };

export function ReceiptCheck({ client, receipt }: { client: Api; receipt: Receipt }) {
  const [verdict, setVerdict] = useState<Verdict>();
  useEffect(() => {
    let live = true;
    void verifyReceipt(client, receipt).then((v) => live && setVerdict(v));
    return () => {
      live = false;
    };
  }, [client, receipt]);
  if (!verdict) return <span className="muted">checking…</span>;
  return (
    <Badge tone={verdict === 'valid' ? 'good' : 'bad'}>
      <span title={`signed by platform key ${receipt.signingKeyId}`}>{VERDICT_TEXT[verdict]}</span>
    </Badge>
  );
}

function Transactions({ client, version, feed, receipts, names }: Omit<Props, 'onChanged'> & { receipts: Receipt[]; names: ReadonlyMap<string, string> }) {
  const receiptOf = new Map(receipts.map((r) => [r.transactionId, r]));
  const { data, error } = useLoad(async () => {
    const { wallets } = await client.get<{ wallets: Wallet[] }>('/v1/wallets');
    const ledgers = await Promise.all(wallets.map((w) => client.get<{ entries: LedgerEntry[] }>(`/v1/wallets/${encodeURIComponent(w.id)}/ledger`)));
    return transactionsOf(ledgers.flatMap((l) => l.entries)).slice(0, 50);
  }, liveKey(version, feed.money));
  return (
    <Section id="transactions" title="Transactions">
      <Problem error={error} />
      {data && data.length === 0 ? <p className="muted">No transaction yet.</p> : null}
      <ul className="transactions">
        {data?.map((t) => (
          <li key={t.id}>
            <details>
              <summary>
                <code>{t.id}</code> · {when(t.at)} · {t.entries.length} ledger {t.entries.length === 1 ? 'entry' : 'entries'}
                <PaidCall receipt={receiptOf.get(t.id)} names={names} />
              </summary>
              <Table label={`Ledger entries of ${t.id}`} head={['Wallet', '#', 'Type', 'Amount', 'Held', 'Balance after', 'Time']} count={t.entries.length} empty="">
                {t.entries.map((e) => (
                  <tr key={e.id}>
                    <td><code>{e.walletId}</code></td>
                    <td className="num">{e.seq}</td>
                    <td>{e.type}</td>
                    <td className="num">{money(e.amountMinor, e.currency)}</td>
                    <td className="num">{money(e.holdMinor, e.currency)}</td>
                    <td className="num">{money(e.balanceAfterMinor, e.currency)}</td>
                    <td>{when(e.createdAt)}</td>
                  </tr>
                ))}
              </Table>
            </details>
          </li>
        ))}
      </ul>
    </Section>
  );
}

/** What a transaction paid for, from its receipt (a purchase still held or refunded without one has none). */
function PaidCall({ receipt, names }: { receipt: Receipt | undefined; names: ReadonlyMap<string, string> }) {
  if (!receipt) return null;
  return (
    <>
      {' · '}
      {money(receipt.amount.amountMinor, receipt.amount.currency)} for {capabilityLabel(names, receipt.capabilityId)}{' '}
      <Badge tone={receipt.status === 'success' ? 'good' : 'bad'}>{receipt.status}</Badge>
    </>
  );
}

function Policies({ client, version }: Omit<Props, 'onChanged' | 'feed'>) {
  const { data, error } = useLoad(() => client.get<{ policies: Policy[] }>('/v1/policies'), version);
  return (
    <Section id="policies" title="Policies">
      <Problem error={error} />
      {data && data.policies.length === 0 ? <p className="muted">No policy: every purchase is allowed. Write one with agentpay policies apply.</p> : null}
      <ul className="policies">
        {data?.policies.map((p) => (
          <li key={p.id}>
            <p>
              <Badge tone={p.enabled ? 'good' : 'plain'}>{p.enabled ? 'enabled' : 'disabled'}</Badge> <strong>{p.policyType}</strong> {p.name ? `“${p.name}”` : ''} <code>{p.id}</code>
            </p>
            <pre>{p.source}</pre>
          </li>
        ))}
      </ul>
    </Section>
  );
}
