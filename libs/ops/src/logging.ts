import { ConsoleLogger, type LoggerService, type LogLevel } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pino, type Logger as Pino } from 'pino';
import { logLevels, type AppConfig } from '#config/config.js';

/**
 * Logs (README.md, Operations). `LOG_FORMAT=json`: pino, one JSON object per line, and one line per
 * request written by pino-http. Otherwise Nest's console format, coloured on a terminal. Either way the ~100
 * "Mapped {/rest/companies, GET} route" lines of a start are kept for LOG_LEVEL=debug,
 * so the first start's credentials banner stays on screen.
 */
const STARTUP_CHATTER = new Set(['RouterExplorer', 'RoutesResolver', 'InstanceLoader', 'NestFactory', 'NestApplication', 'GraphQLModule']);

/** pino's level for each Nest level. */
const PINO_LEVEL: Record<LogLevel, pino.Level> = {
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
};

/**
 * What must never reach a log line (README.md, Operations), in case a field holding it is ever logged:
 * request headers with credentials, and body fields with secrets.
 */
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.secret',
  '*.token',
  '*.access_token',
  '*.refresh_token',
  '*.client_secret',
];

let root: Pino | undefined;
export function pinoRoot(config: AppConfig): Pino {
  const levels = logLevels(config.logLevel);
  root ??= pino({
    level: PINO_LEVEL[levels[levels.length - 1]],
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACT, censor: '[redacted]' },
  });
  return root;
}

/**
 * Nest's colours on a terminal only (README.md, Operations), so log files and pipes hold plain
 * text: both stdout and stderr (errors) must be terminals that take colours (NO_COLOR,
 * TERM=dumb). FORCE_COLOR decides over everything, with Node.js's values.
 */
function colorsWanted(): boolean {
  const force = process.env.FORCE_COLOR;
  if (force !== undefined) return ['', '1', '2', '3', 'true'].includes(force);
  const colourTerminal = (stream: NodeJS.WriteStream) => Boolean(stream.isTTY) && stream.hasColors();
  return colourTerminal(process.stdout) && colourTerminal(process.stderr);
}

class QuietConsoleLogger extends ConsoleLogger {
  constructor(
    private readonly verboseStartup: boolean,
    levels: LogLevel[],
  ) {
    super({ logLevels: levels, colors: colorsWanted() });
  }

  override log(message: unknown, ...rest: unknown[]): void {
    const context = rest[rest.length - 1];
    if (!this.verboseStartup && typeof context === 'string' && STARTUP_CHATTER.has(context)) return;
    super.log(message, ...(rest as [string]));
  }

  /** Every level's text passes here: a secret inside a message or a stack is replaced. */
  protected override formatMessage(...args: Parameters<ConsoleLogger['formatMessage']>): string {
    return scrubSecrets(super.formatMessage(...args));
  }

  // Nest calls it for every error line, with no stack for `logger.error(message)` alone.
  protected override printStackTrace(stack: string | undefined): void {
    super.printStackTrace(stack === undefined ? (stack as unknown as string) : scrubSecrets(stack));
  }
}

class PinoNestLogger implements LoggerService {
  constructor(
    private readonly pino: Pino,
    private readonly verboseStartup: boolean,
  ) {}

  private write(level: pino.Level, message: unknown, rest: unknown[]) {
    const context = typeof rest[rest.length - 1] === 'string' ? (rest[rest.length - 1] as string) : undefined;
    if (level === 'info' && !this.verboseStartup && context && STARTUP_CHATTER.has(context)) return;
    const found = level === 'error' || level === 'fatal' ? rest.find((r, i) => typeof r === 'string' && i < rest.length - 1) : undefined;
    const stack = typeof found === 'string' ? scrubSecrets(found) : undefined;
    if (message instanceof Error)
      this.pino[level](
        { context, err: { type: message.name, message: scrubSecrets(message.message), stack: scrubSecrets(message.stack ?? '') } },
        scrubSecrets(message.message),
      );
    else if (typeof message === 'object' && message !== null) this.pino[level]({ context, ...message });
    else this.pino[level]({ context, ...(stack ? { stack } : {}) }, scrubSecrets(String(message)));
  }

  log(message: unknown, ...rest: unknown[]) {
    this.write('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]) {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]) {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]) {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]) {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]) {
    this.write('fatal', message, rest);
  }
}

/** The Nest logger of an app (pass to `NestFactory.create({ logger })`) or of the launcher. */
export function createLogger(config: AppConfig): LoggerService {
  const levels = logLevels(config.logLevel);
  const verboseStartup = levels.includes('debug');
  return config.logFormat === 'json'
    ? new PinoNestLogger(pinoRoot(config), verboseStartup)
    : new QuietConsoleLogger(verboseStartup, levels);
}

type LoggedRequest = IncomingMessage & {
  id?: string;
  originalUrl?: string;
  principal?: { workspaceId: string; subjectId: string; kind: string };
};

/**
 * Our bearer secrets by their prefixes (API keys `wrs_`, invite tokens `wrsi_`, server-app
 * secrets `wrsa_`, webhook signing secrets `whsec_`), wherever they turn up: a key pasted
 * where an id belongs is still a key.
 */
const SECRET = /\b(?:wrs|wrsi|wrsa|whsec)_[A-Za-z0-9+/=_-]+/g;
const REDACTED = '[redacted]';

/** A log text with every prefixed secret in it replaced. */
export function scrubSecrets(text: string): string {
  return text.replace(SECRET, REDACTED);
}

/**
 * A request path fit for a log: the segment after /settings/invites/ is an invite token
 * whatever it looks like (a link cut short still opens the page for its owner), and any
 * segment holding a prefixed secret, percent-encoded or not, is replaced.
 */
export function redactPath(path: string): string {
  const segments = path.split('/');
  return segments
    .map((segment, i) => {
      if (i >= 2 && segments[i - 1] === 'invites' && segments[i - 2] === 'settings' && segment) return REDACTED;
      let decoded = segment;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        // not valid percent-encoding: judged as it is
      }
      return new RegExp(SECRET.source).test(decoded) ? REDACTED : segment;
    })
    .join('/');
}

/** The path without its query string (queries can carry filters with personal data, OAuth codes and state), secrets redacted. */
function pathOf(req: LoggedRequest): string {
  const url = req.originalUrl ?? req.url ?? '';
  const q = url.indexOf('?');
  return redactPath(q < 0 ? url : url.slice(0, q));
}

/**
 * One line per request, written when the response is finished (or the connection
 * dropped): requestId, method, path, status, durationMs, and who called — workspaceId and
 * the credential's id (API key id, user id or app client id), never the credential.
 * Mount it after the request id middleware. `undefined` in text format. (pino-http
 * would do the same but declares a global `IncomingMessage.id` type that clashes with
 * ours; this is the part of it we need.)
 */
export function requestLogging(config: AppConfig) {
  if (config.logFormat !== 'json') return undefined;
  const logger = pinoRoot(config);
  return (req: LoggedRequest, res: ServerResponse, next: () => void) => {
    const started = process.hrtime.bigint();
    req.id ??= randomUUID();
    let done = false;
    const write = () => {
      if (done) return;
      done = true;
      const line = {
        requestId: req.id,
        method: req.method,
        path: pathOf(req),
        status: res.statusCode,
        durationMs: Math.round(Number(process.hrtime.bigint() - started) / 1e4) / 100,
        workspaceId: req.principal?.workspaceId,
        credentialId: req.principal?.subjectId,
        credentialKind: req.principal?.kind,
        ...(res.writableFinished ? {} : { aborted: true }),
      };
      const level = res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info';
      logger[level](line, 'request');
    };
    res.once('finish', write);
    res.once('close', write);
    next();
  };
}
