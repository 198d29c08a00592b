/**
 * A provider: its capabilities with calls, failures, failure rate and revenue (from its
 * sales receipts, which the page counts), revenue and failures per day, its settlement
 * wallet with its ledger, and its payouts.
 */
import { allPages, type Api } from '../api.js';
import { callsPerDay, capabilityStats, currenciesOf, lastDays, percent, spendPerDay } from '../aggregate.js';
import { BarChart } from '../components/BarChart.js';
import { Badge, Problem, Section, Table } from '../components/common.js';
import { money, when } from '../money.js';
import { liveKey, useLoad } from '../useLoad.js';
import type { Feed } from '../feed.js';
import { ReceiptCheck } from './Workspace.js';
import type { Capability, LedgerEntry, Payout, Receipt, Wallet, Whoami } from '../types.js';

const DAYS = 14;

export function ProviderView({ client, version, feed, me }: { client: Api; version: number; feed: Feed; me: Whoami }) {
  // sales, the settlement wallet and payouts move with the feed's payment and payout events
  const live = liveKey(version, feed.money);
  const sales = useLoad(async () => {
    const [page, health, caps] = await Promise.all([
      allPages<Receipt>(client, '/v1/receipts?limit=200', 'receipts'),
      client.get<{ time: string }>('/health'),
      client.get<{ capabilities: { capability: Capability }[] }>('/v1/capabilities'),
    ]);
    return { receipts: page.items, complete: page.complete, now: health.time, capabilities: caps.capabilities.map((c) => c.capability) };
  }, live);
  const walletId = me.tenant.walletId;
  const wallet = useLoad(async () => {
    if (!walletId) return undefined;
    const [w, l] = await Promise.all([
      client.get<{ wallet: Wallet & { balance: { balanceMinor: string; availableMinor: string; currency: string } } }>(`/v1/wallets/${encodeURIComponent(walletId)}`),
      client.get<{ entries: LedgerEntry[] }>(`/v1/wallets/${encodeURIComponent(walletId)}/ledger`),
    ]);
    return { wallet: w.wallet, entries: [...l.entries].sort((a, b) => b.seq - a.seq).slice(0, 50) };
  }, live);
  const payouts = useLoad(() => client.get<{ payouts: Payout[] }>('/v1/payouts?limit=100'), live);

  const d = sales.data;
  const stats = d ? capabilityStats(d.receipts) : undefined;
  const days = d ? lastDays(d.now, DAYS) : [];
  return (
    <>
      <nav aria-label="Sections" className="sections">
        <a href="#capabilities">Capabilities</a> <a href="#wallet">Settlement wallet</a> <a href="#payouts">Payouts</a>
      </nav>
      <Section id="capabilities" title="Capabilities">
        <Problem error={sales.error} />
        {d && stats ? (
          <>
            <Table label="Capabilities" head={['Capability', 'Price', 'Status', 'Calls', 'Failed', 'Failure rate', 'Revenue (gross)']} count={d.capabilities.length} empty="No capability yet: agentpay publish.">
              {d.capabilities.map((c) => {
                const s = stats.get(c.id);
                return (
                  <tr key={c.id} data-capability={c.id}>
                    <td>
                      {c.name} <code>{c.id}</code>
                    </td>
                    <td className="num">{money(c.priceMinor, c.currency)}</td>
                    <td><Badge tone={c.status === 'active' ? 'good' : 'plain'}>{c.status}</Badge></td>
                    <td className="num">{s?.calls ?? 0}</td>
                    <td className="num">{s?.failures ?? 0}</td>
                    <td className="num">{percent(s?.failures ?? 0, s?.calls ?? 0)}</td>
                    <td className="num">{s && s.revenue.size ? [...s.revenue].map(([cur, v]) => money(v, cur)).join(', ') : money('0', c.currency)}</td>
                  </tr>
                );
              })}
            </Table>
            <div className="charts">
              {currenciesOf(d.receipts).map((cur) => (
                <BarChart key={cur} title={`Revenue per day, last ${DAYS} days (${cur})`} buckets={spendPerDay(d.receipts, days, cur)} format={(v) => money(v, cur)} short={(x) => x.slice(5)} empty="No sale in these days." />
              ))}
              <BarChart title={`Failed calls per day, last ${DAYS} days`} buckets={callsPerDay(d.receipts, days).map((b) => ({ label: b.day, value: BigInt(b.failures) }))} format={(v) => `${v} failed`} short={(x) => x.slice(5)} empty="No failed call in these days." />
            </div>
            <details>
              <summary>Calls and failure rate per day</summary>
              <Table label="Calls per day" head={['Day', 'Calls', 'Failed', 'Failure rate']} count={days.length} empty="">
                {callsPerDay(d.receipts, days).map((b) => (
                  <tr key={b.day}>
                    <th scope="row">{b.day}</th>
                    <td className="num">{b.calls}</td>
                    <td className="num">{b.failures}</td>
                    <td className="num">{percent(b.failures, b.calls)}</td>
                  </tr>
                ))}
              </Table>
            </details>
            {d.complete ? null : <p className="muted">Counted over the newest receipts only; older ones are in the API (GET /v1/receipts).</p>}
            <h3>Recent sales</h3>
            <Table label="Recent sales" head={['Receipt', 'Time', 'Capability', 'Amount', 'Status', 'Signature']} count={Math.min(d.receipts.length, 20)} empty="No sale yet.">
              {d.receipts.slice(0, 20).map((r) => (
                <tr key={r.id}>
                  <td><code>{r.id}</code></td>
                  <td>{when(r.timestamp)}</td>
                  <td><code>{r.capabilityId}</code></td>
                  <td className="num">{money(r.amount.amountMinor, r.amount.currency)}</td>
                  <td><Badge tone={r.status === 'success' ? 'good' : 'bad'}>{r.status}</Badge></td>
                  <td><ReceiptCheck client={client} receipt={r} /></td>
                </tr>
              ))}
            </Table>
          </>
        ) : null}
      </Section>
      <Section id="wallet" title="Settlement wallet">
        <Problem error={wallet.error} />
        {!walletId ? <p className="muted">This provider has no settlement wallet.</p> : null}
        {wallet.data ? (
          <>
            <p>
              <code>{wallet.data.wallet.id}</code>: balance <strong>{money(wallet.data.wallet.balance.balanceMinor, wallet.data.wallet.balance.currency)}</strong>, available{' '}
              {money(wallet.data.wallet.balance.availableMinor, wallet.data.wallet.balance.currency)}
            </p>
            <Table label="Settlement ledger" head={['#', 'Type', 'Amount', 'Balance after', 'Transaction', 'Time']} count={wallet.data.entries.length} empty="No ledger entry yet.">
              {wallet.data.entries.map((e) => (
                <tr key={e.id}>
                  <td className="num">{e.seq}</td>
                  <td>{e.type}</td>
                  <td className="num">{money(e.amountMinor, e.currency)}</td>
                  <td className="num">{money(e.balanceAfterMinor, e.currency)}</td>
                  <td>{e.transactionId ? <code>{e.transactionId}</code> : (e.reference ?? '-')}</td>
                  <td>{when(e.createdAt)}</td>
                </tr>
              ))}
            </Table>
          </>
        ) : null}
      </Section>
      <Section id="payouts" title="Payouts">
        <Problem error={payouts.error} />
        {payouts.data ? <PayoutTable payouts={payouts.data.payouts} empty="No payout yet: agentpay payouts create." /> : null}
      </Section>
    </>
  );
}

export function PayoutTable({ payouts, empty, showProvider = false }: { payouts: Payout[]; empty: string; showProvider?: boolean }) {
  return (
    <Table label="Payouts" head={[...(showProvider ? ['Provider'] : []), 'Payout', 'Amount', 'Rail', 'Status', 'Submitted', 'Settled']} count={payouts.length} empty={empty}>
      {payouts.map((p) => (
        <tr key={p.id}>
          {showProvider ? <td><code>{p.providerId}</code></td> : null}
          <td><code>{p.id}</code></td>
          <td className="num">{money(p.amountMinor, p.currency)}</td>
          <td>{p.rail}</td>
          <td><Badge tone={p.status === 'confirmed' ? 'good' : p.status === 'submitted' ? 'warn' : 'bad'}>{p.status}</Badge></td>
          <td>{when(p.createdAt)}</td>
          <td>{when(p.settledAt)}</td>
        </tr>
      ))}
    </Table>
  );
}
