/**
 * A bar chart in plain SVG: one bar per bucket, scaled to the largest, every value in the
 * bar's tooltip and in a table under the chart (for screen readers and exact figures).
 * Bar heights are geometry, not money: the exact sums stay bigint and are shown formatted.
 */
import type { Bucket } from '../aggregate.js';

interface Props {
  title: string;
  buckets: readonly Bucket[];
  format: (v: bigint) => string;
  /** how a bucket's label reads under its bar (default: as is) */
  short?: (label: string) => string;
  empty?: string;
}

const W = 640;
const H = 200;
const PAD = { top: 10, right: 8, bottom: 34, left: 8 };

export function BarChart({ title, buckets, format, short = (l) => l, empty = 'Nothing yet.' }: Props) {
  const max = buckets.reduce((m, b) => (b.value > m ? b.value : m), 0n);
  const total = buckets.reduce((s, b) => s + b.value, 0n);
  const n = Math.max(buckets.length, 1);
  const slot = (W - PAD.left - PAD.right) / n;
  const barW = Math.max(2, slot * 0.7);
  const plotH = H - PAD.top - PAD.bottom;
  // label every bar while they fit, else every k-th
  const every = Math.max(1, Math.ceil(n / 10));
  return (
    <figure className="chart">
      <figcaption>
        {title} <span className="muted">(total {format(total)})</span>
      </figcaption>
      {max === 0n ? (
        <p className="muted">{empty}</p>
      ) : (
        <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${title}: bar chart, total ${format(total)}`}>
          <line className="axis" x1={PAD.left} x2={W - PAD.right} y1={H - PAD.bottom} y2={H - PAD.bottom} />
          {buckets.map((b, i) => {
            // thousandths of the tallest bar, by bigint division: exact enough for pixels
            const h = (Number((b.value * 1000n) / max) / 1000) * plotH;
            const x = PAD.left + i * slot + (slot - barW) / 2;
            return (
              <g key={i}>
                <rect className="bar" x={x} y={H - PAD.bottom - h} width={barW} height={h}>
                  <title>{`${b.label}: ${format(b.value)}`}</title>
                </rect>
                {i % every === 0 ? (
                  <text className="tick" x={x + barW / 2} y={H - PAD.bottom + 16} textAnchor="middle">
                    {short(b.label)}
                  </text>
                ) : null}
              </g>
            );
          })}
        </svg>
      )}
      <details>
        <summary>Values</summary>
        <div className="table-wrap" role="region" aria-label={`${title}: values`} tabIndex={0}>
          <table>
            <tbody>
              {buckets.map((b, i) => (
                <tr key={i}>
                  <th scope="row">{b.label}</th>
                  <td className="num">{format(b.value)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
