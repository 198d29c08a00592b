/**
 * The operator: paid and failed calls, volume and fees per hour or day across the platform
 * (GET /v1/platform/activity, counted by the gateway), the platform's fee income and the paid calls that brought it, per day over the
 * last 14 days (from the platform revenue wallet's ledger), providers waiting for a verification decision (decide here), and payouts
 * stuck in `submitted` for more than a day by the gateway's clock (as `agentpay payouts list
 * --stuck --as operator`), to resolve once the rail has been asked out of band.
 */
import { useState } from 'react';
import type { Api } from '../api.js';
import { Problem, Section, Table } from '../components/common.js';
import { activityCurrencies, activitySeries, activityTick, feesPerDay, lastDays, ledgerCurrencies } from '../aggregate.js';
import { BarChart } from '../components/BarChart.js';
import { money, when } from '../money.js';
import { liveKey, useLoad } from '../useLoad.js';
import type { Feed } from '../feed.js';
import { PayoutTable } from './Provider.js';
import type { Activity, ActivityBucketSize, LedgerEntry, Payout, Provider, Wallet } from '../types.js';
// as the CLI's `payouts list --stuck`; a file of plain values, without the contract's schemas
import { PAYOUT_STUCK_AFTER_MS } from '../../../packages/sdk/src/contract/payout-states.js';

const DAYS = 14;

export function OperatorView({ client, version, feed, onChanged }: { client: Api; version: number; feed: Feed; onChanged: () => void }) {
  const requests = useLoad(() => client.get<{ providers: Provider[] }>('/v1/providers?verification=requested'), version);
  const stuck = useLoad(async () => {
    const { time } = await client.get<{ time: string }>('/health');
    const before = new Date(Date.parse(time) - PAYOUT_STUCK_AFTER_MS).toISOString();
    return client.get<{ payouts: Payout[] }>(`/v1/payouts?status=submitted&submittedBefore=${encodeURIComponent(before)}&limit=200`);
    // the operator's events (payout.resolved, reconciliation.*) move payouts
  }, liveKey(version, feed.money));
  const revenue = useLoad(async () => {
    const [{ wallets }, { time }] = await Promise.all([client.get<{ wallets: Wallet[] }>('/v1/wallets'), client.get<{ time: string }>('/health')]);
    // the operator's only wallet: the platform revenue wallet, which collects the fees
    const platform = wallets.find((w) => w.ownerType === 'platform');
    if (!platform) return { walletId: undefined, entries: [] as LedgerEntry[], now: time };
    const { entries } = await client.get<{ entries: LedgerEntry[] }>(`/v1/wallets/${encodeURIComponent(platform.id)}/ledger`);
    return { walletId: platform.id, entries, now: time };
  }, version);
  const [busy, setBusy] = useState<string>();
  const [actionError, setActionError] = useState<unknown>();
  const decide = async (p: Provider, decision: 'approved' | 'denied') => {
    setBusy(p.id);
    setActionError(undefined);
    try {
      await client.post(`/v1/providers/${encodeURIComponent(p.id)}/verify`, { decision });
      onChanged();
    } catch (e) {
      setActionError(e);
    } finally {
      setBusy(undefined);
    }
  };
  const providers = requests.data?.providers ?? [];
  const r = revenue.data;
  const days = r ? feesPerDay(r.entries, lastDays(r.now, DAYS)) : [];
  const short = (x: string) => x.slice(5);
  return (
    <>
      <nav aria-label="Sections" className="sections">
        <a href="#activity">Sales and failures</a> <a href="#revenue">Platform revenue</a> <a href="#verification">Verification requests</a> <a href="#stuck-payouts">Stuck payouts</a>
      </nav>
      <SalesAndFailures client={client} version={version} />
      <Section id="revenue" title="Platform revenue">
        <Problem error={revenue.error} />
        {r ? (
          <>
            <p className="muted">
              The fees the platform took, per UTC day over the last {DAYS} days, from the ledger of the platform revenue wallet {r.walletId ? <code>{r.walletId}</code> : null}: one <code>fee</code> entry per paid call or session claim that left a fee.
            </p>
            <div className="charts">
              {ledgerCurrencies(r.entries).map((cur) => (
                <BarChart key={cur} title={`Fees per day, last ${DAYS} days (${cur})`} buckets={days.map((d) => ({ label: d.day, value: d.fees.get(cur) ?? 0n }))} format={(v) => money(v, cur)} short={short} empty="No fee in these days." />
              ))}
              <BarChart title={`Paid calls with a fee per day, last ${DAYS} days`} buckets={days.map((d) => ({ label: d.day, value: BigInt(d.payments) }))} format={(v) => `${v} paid`} short={short} empty="No paid call in these days." />
            </div>
          </>
        ) : null}
      </Section>
      <Section id="verification" title="Verification requests">
        <Problem error={requests.error ?? actionError} />
        {requests.data ? (
          <Table label="Verification requests" head={['Provider', 'Website', 'Note', 'Contact', 'Requested', 'Decision']} count={providers.length} empty="No provider is waiting for verification.">
            {providers.map((p) => (
              <tr key={p.id}>
                <td>
                  <span id={`${p.id}-name`}>{p.name}</span> <code>{p.id}</code>
                </td>
                <td>{p.website ?? '-'}</td>
                <td>{p.verification?.note ?? '-'}</td>
                <td>{p.verification?.contact ?? '-'}</td>
                <td>{when(p.verification?.requestedAt)}</td>
                <td className="actions">
                  <button type="button" className="primary" disabled={busy === p.id} aria-describedby={`${p.id}-name`} onClick={() => void decide(p, 'approved')}>
                    Verify
                  </button>
                  <button type="button" disabled={busy === p.id} aria-describedby={`${p.id}-name`} onClick={() => void decide(p, 'denied')}>
                    Deny
                  </button>
                </td>
              </tr>
            ))}
          </Table>
        ) : null}
      </Section>
      <Section id="stuck-payouts" title="Stuck payouts">
        <Problem error={stuck.error} />
        <p className="muted">Submitted more than a day ago and still not settled by the rail. Ask the rail, then: agentpay payouts resolve ID --outcome paid|failed --reason "…".</p>
        {stuck.data ? <PayoutTable payouts={stuck.data.payouts} empty="No stuck payout." showProvider /> : null}
      </Section>
    </>
  );
}

const SPANS: Record<ActivityBucketSize, string> = { hour: 'last 24 hours', day: `last ${DAYS} days` };

/** Paid and failed calls, volume and fees per bucket, by the hour or by the day, as the gateway counts them. */
function SalesAndFailures({ client, version }: { client: Api; version: number }) {
  const [bucket, setBucket] = useState<ActivityBucketSize>('day');
  return (
    <Section
      id="activity"
      title="Sales and failures"
      actions={
        <div className="actions" role="group" aria-label="Bucket size">
          {(['hour', 'day'] as const).map((b) => (
            <button key={b} type="button" aria-pressed={bucket === b} className={bucket === b ? 'primary' : undefined} onClick={() => setBucket(b)}>
              By {b}
            </button>
          ))}
        </div>
      }
    >
      {/* keyed by the bucket size: a new size loads anew */}
      <ActivityCharts key={bucket} client={client} version={version} bucket={bucket} />
    </Section>
  );
}

function ActivityCharts({ client, version, bucket }: { client: Api; version: number; bucket: ActivityBucketSize }) {
  const activity = useLoad(() => client.get<Activity>(`/v1/platform/activity?bucket=${bucket}`), version);
  const a = activity.data;
  const s = a ? activitySeries(a) : undefined;
  const short = (l: string) => activityTick(l, bucket);
  const per = bucket === 'day' ? 'per day' : 'per hour';
  return (
    <>
      <Problem error={activity.error} />
      {a && s ? (
        <>
          <p className="muted">
            Every seller's paid calls {per} (UTC) over the {SPANS[bucket]}, counted by the gateway when each was resolved (GET /v1/platform/activity): paid calls, failed ones (the seller reported a failure, or the hold expired; the buyer refunded), what buyers paid and the fees taken.
          </p>
          <div className="charts">
            <BarChart title={`Paid calls ${per}, ${SPANS[bucket]}`} buckets={s.paid} format={(v) => `${v} paid`} short={short} empty="No paid call in this time." />
            <BarChart title={`Failed calls ${per}, ${SPANS[bucket]}`} buckets={s.failed} format={(v) => `${v} failed`} short={short} empty="No failed call in this time." />
            {activityCurrencies(a).map((cur) => (
              <BarChart key={`v-${cur}`} title={`Volume ${per}, ${SPANS[bucket]} (${cur})`} buckets={s.volume(cur)} format={(v) => money(v, cur)} short={short} empty="No sale in this time." />
            ))}
            {activityCurrencies(a).map((cur) => (
              <BarChart key={`f-${cur}`} title={`Fees on paid calls ${per}, ${SPANS[bucket]} (${cur})`} buckets={s.fees(cur)} format={(v) => money(v, cur)} short={short} empty="No fee in this time." />
            ))}
          </div>
        </>
      ) : null}
    </>
  );
}
