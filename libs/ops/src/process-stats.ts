import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/*
 * Figures a process keeps about itself, answered over the IPC channel of whoever started it
 * (the launcher, or a test): never on a network port, so no client can read them. A message
 * `{stats: 'read'}` is answered `{stats: {...}}`; `{stats: 'reset'}` starts the event loop's
 * delay histogram anew and answers the same way. The event loop's longest delay
 * (`monitorEventLoopDelay`) is how a test tells that no request froze the process, without
 * timing requests.
 */

type Provider = () => Record<string, number>;

const providers = new Map<string, Provider>();
let histogram: IntervalHistogram | undefined;

/** Adds `name.<key>` figures to every answer; a later registration under the same name replaces the earlier one. */
export function registerStats(name: string, provider: Provider): void {
  providers.set(name, provider);
}

export function processStats(): Record<string, number> {
  const stats: Record<string, number> = {};
  if (histogram) {
    stats['eventLoop.maxDelayMs'] = histogram.max / 1e6;
    stats['eventLoop.p99DelayMs'] = histogram.percentile(99) / 1e6;
  }
  const memory = process.memoryUsage();
  stats['memory.heapUsedBytes'] = memory.heapUsed;
  stats['memory.rssBytes'] = memory.rss;
  for (const [name, provider] of providers) {
    for (const [key, value] of Object.entries(provider())) stats[`${name}.${key}`] = value;
  }
  return stats;
}

/** Answers stats requests on the IPC channel, when the process has one; a no-op otherwise. */
export function answerStatsOverIpc(): void {
  if (!process.send || histogram) return;
  histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  process.on('message', (message: { stats?: unknown }) => {
    if (message?.stats !== 'read' && message?.stats !== 'reset') return;
    if (message.stats === 'reset') histogram!.reset();
    process.send?.({ stats: processStats() });
  });
}
