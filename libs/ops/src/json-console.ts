import { format } from 'node:util';
import { exitOnConfigError, loadConfig } from '#config/config.js';
import { pinoRoot, scrubSecrets } from './logging.js';

/**
 * With LOG_FORMAT=json every line is JSON (README.md, Operations), including what libraries print with
 * `console.*` (oidc-provider's runtime notice, for one). Imported first by each entry
 * point, before the modules that print while they load.
 */
// The first reading of the settings: a wrong one ends the start here, in one line.
let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
} catch (err) {
  exitOnConfigError(err);
}
if (config.logFormat === 'json') {
  const logger = pinoRoot(config);
  const to =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: unknown[]) =>
      logger[level]({ context: 'console' }, scrubSecrets(format(...args)));
  console.debug = to('debug');
  console.log = to('info');
  console.info = to('info');
  console.warn = to('warn');
  console.error = to('error');
}
