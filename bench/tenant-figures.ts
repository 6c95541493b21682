import autocannon from 'autocannon';

/** What another tenant's requests got during a run (the churn benches: schema-churn.ts, surfaces-churn.ts). */
export interface Figures {
  p50: number;
  p99: number;
  rps: number;
  non2xx: number;
  errors: number;
}

export async function figures(options: Parameters<typeof autocannon>[0]): Promise<Figures> {
  const r = await autocannon(options);
  return { p50: r.latency.p50, p99: r.latency.p99, rps: Math.round(r.requests.average), non2xx: r.non2xx, errors: r.errors };
}

/** One line: the label padded to `width`, then the figures. */
export const figuresLine = (label: string, f: Figures, width: number) =>
  `  ${label.padEnd(width)} p50 ${String(f.p50).padStart(4)} ms  p99 ${String(f.p99).padStart(5)} ms  ${f.rps} req/s  (non-2xx ${f.non2xx}, errors ${f.errors})`;
