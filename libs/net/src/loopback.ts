/** The names a URL uses for this machine (RFC 8252 §7.3: loopback redirect URIs; local tools' origins). */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** `url.hostname` names this machine: `localhost`, `127.0.0.1` or `[::1]`. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname);
}
