import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Preloaded into a bench child (`--import`): its event loop's delay, sent to the parent and
 * started afresh when the parent sends 'loop-delay' (milliseconds: p50, p99, max).
 */
const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();
process.on('message', (message) => {
  if (message !== 'loop-delay') return;
  process.send?.({ loopDelay: { p50: delay.percentile(50) / 1e6, p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 } });
  delay.reset();
});
