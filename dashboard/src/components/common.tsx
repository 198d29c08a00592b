/** Small pieces every view uses: a section with its heading, a problem notice, a status badge. */
import type { ReactNode } from 'react';
import { ApiError } from '../api.js';

export function Section({ id, title, children, actions }: { id: string; title: string; children: ReactNode; actions?: ReactNode }) {
  return (
    <section id={id} aria-labelledby={`${id}-title`} className="card">
      <div className="card-head">
        <h2 id={`${id}-title`}>{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}

export function Problem({ error }: { error: unknown }) {
  if (!error) return null;
  const text = error instanceof ApiError ? `${error.code}: ${error.message}` : error instanceof Error ? error.message : String(error);
  return (
    <p role="alert" className="problem">
      {text}
    </p>
  );
}

export function Badge({ tone, children }: { tone: 'good' | 'bad' | 'warn' | 'plain'; children: ReactNode }) {
  return <span className={`badge badge-${tone}`}>{children}</span>;
}

/** A table that scrolls sideways on a narrow screen instead of widening the page. */
export function Table({ label, head, children, empty, count }: { label: string; head: string[]; children: ReactNode; empty: string; count: number }) {
  if (count === 0) return <p className="muted">{empty}</p>;
  return (
    <div className="table-wrap" role="region" aria-label={label} tabIndex={0}>
      <table>
        <thead>
          <tr>
            {head.map((h) => (
              <th scope="col" key={h}>
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
