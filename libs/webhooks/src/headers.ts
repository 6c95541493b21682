import { BadInputError, ErrorCode } from '#errors/errors.js';

/**
 * Custom headers of a webhook (docs/webhooks.md, "Custom headers"): a short list sent with
 * every delivery, e.g. `Authorization: Bearer {{vault.CRM_TOKEN}}`. A value may name secrets
 * of the workspace's vault; they are filled in when the POST is sent, never stored or shown
 * filled in. Headers that steer the connection or the message (RFC 9110 §7.6.1 hop-by-hop,
 * framing, the Standard Webhooks signature headers) are ours alone.
 */
export interface WebhookHeader {
  name: string;
  value: string;
}

export const MAX_HEADERS = 10;
export const MAX_HEADER_VALUE = 1024;
/** All custom headers of one delivery together, secrets filled in: receivers commonly refuse header blocks over 16 KB. */
export const MAX_RESOLVED_BYTES = 16 * 1024;

/** An RFC 9110 token, narrowed to what header names look like in practice. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9!#$%&'*+.^_`|~-]{0,63}$/;
/** Visible ASCII, space and tab: no line breaks, no control characters, nothing Node would refuse to send. */
const VALUE = /^[\t\x20-\x7e]*$/;
const REFERENCE = /\{\{vault\.([A-Z][A-Z0-9_]{0,63})\}\}/g;

/** Lower-cased names a webhook may not set: hop-by-hop (RFC 9110 §7.6.1), framing, and ours. */
const RESERVED = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'content-type',
  'content-encoding',
  'expect',
  'user-agent',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
]);

/** The list as given in a JSON body: `[{name, value}]`; every problem reported at once. */
export function parseHeaders(input: unknown): WebhookHeader[] {
  if (input === undefined || input === null) return [];
  if (!Array.isArray(input)) throw new BadInputError(ErrorCode.VALIDATION_FAILED, 'headers must be a list of {name, value}');
  const problems: string[] = [];
  if (input.length > MAX_HEADERS) problems.push(`headers: at most ${MAX_HEADERS}; got ${input.length}`);
  const seen = new Set<string>();
  const headers: WebhookHeader[] = [];
  for (const [i, item] of input.slice(0, MAX_HEADERS + 1).entries()) {
    const h = item as Record<string, unknown> | null;
    if (!h || typeof h !== 'object' || Array.isArray(h) || typeof h.name !== 'string' || typeof h.value !== 'string') {
      problems.push(`headers[${i}] must be {name, value} with two strings`);
      continue;
    }
    const extra = Object.keys(h).filter((k) => k !== 'name' && k !== 'value');
    if (extra.length) problems.push(`headers[${i}]: unknown field ${extra.join(', ')}; allowed: name, value`);
    const name = h.name.trim();
    const value = h.value.trim();
    const lower = name.toLowerCase();
    if (!NAME.test(name)) {
      problems.push(`headers[${i}].name must be a header name (letters, digits and -, at most 64); got "${name.slice(0, 64)}"`);
    } else if (RESERVED.has(lower) || lower.startsWith('webhook-') || lower.startsWith('proxy-') || lower.startsWith('sec-')) {
      problems.push(`headers: ${name} is set by the connection or by the service and cannot be a custom header`);
    } else if (seen.has(lower)) problems.push(`headers: ${name} is given twice`);
    seen.add(lower);
    if (value.length > MAX_HEADER_VALUE)
      problems.push(`headers: the value of ${name} must be at most ${MAX_HEADER_VALUE} characters; got ${value.length}`);
    else if (!VALUE.test(value))
      problems.push(`headers: the value of ${name} may hold visible ASCII characters, spaces and tabs only (no line breaks)`);
    else if (value.replace(REFERENCE, '').includes('{{') || value.replace(REFERENCE, '').includes('}}'))
      problems.push(`headers: the value of ${name} has a placeholder other than {{vault.NAME}} (NAME: capital letters, digits and _)`);
    headers.push({ name, value });
  }
  if (problems.length) throw new BadInputError(ErrorCode.VALIDATION_FAILED, ...problems);
  return headers;
}

/** The vault names the headers refer to, each once. */
export function referencedNames(headers: WebhookHeader[]): string[] {
  return [...new Set(headers.flatMap((h) => [...h.value.matchAll(REFERENCE)].map((m) => m[1])))];
}

/** `Name: value` lines, as the settings form shows and takes them. */
export function headersToLines(headers: WebhookHeader[]): string {
  return headers.map((h) => `${h.name}: ${h.value}`).join('\n');
}

export function linesToHeaders(text: string): { name: string; value: string }[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const colon = line.indexOf(':');
      return colon < 0 ? { name: line, value: '' } : { name: line.slice(0, colon), value: line.slice(colon + 1) };
    });
}

/**
 * The headers with the vault's values filled in, or why they cannot be sent (a secret gone,
 * a value a header cannot carry, too large). The reason names headers and secrets, never a value.
 */
export function resolveHeaders(
  headers: WebhookHeader[],
  values: Map<string, string>,
): { headers: Record<string, string>; error?: undefined } | { error: string } {
  const out: Record<string, string> = {};
  let bytes = 0;
  for (const h of headers) {
    let missing: string | undefined;
    const value = h.value.replace(REFERENCE, (_, name: string) => {
      const v = values.get(name);
      if (v === undefined) missing ??= name;
      return v ?? '';
    });
    if (missing) return { error: `header ${h.name}: the vault has no secret named ${missing} any more` };
    if (!VALUE.test(value))
      return { error: `header ${h.name}: a vault value it names holds line breaks or other characters a header cannot carry` };
    bytes += h.name.length + value.length + 4;
    if (bytes > MAX_RESOLVED_BYTES)
      return { error: `custom headers: more than ${MAX_RESOLVED_BYTES} bytes with the vault's values filled in` };
    out[h.name.toLowerCase()] = value;
  }
  return { headers: out };
}
