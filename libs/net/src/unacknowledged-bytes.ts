import { readFile } from 'node:fs/promises';
import { isIP, type Socket } from 'node:net';
import { endianness } from 'node:os';
import ipaddr from 'ipaddr.js';

/*
 * What a TCP peer has taken, as the kernel knows it. A socket's own counters (bytesWritten,
 * 'drain') count bytes handed to the kernel, whose send buffer (megabytes once autotuned)
 * takes more only after a third of it has been acknowledged: a client reading 20 KB/s moves
 * them once a minute. The kernel's count of bytes not yet acknowledged moves every time the
 * client's receive window reopens (measured on loopback: steps of ~256 KB).
 *
 * Linux shows it per connection in /proc/net/tcp and /proc/net/tcp6 (proc(5), "tx_queue":
 * write_seq − snd_una for an established connection). Elsewhere there is no portable way
 * from Node, and callers get undefined.
 */

const ESTABLISHED = '01';

/** Reads under way: callers at the same moment (exports watched on the same tick) share one. */
const reading = new Map<string, Promise<string | undefined>>();

function table(file: string): Promise<string | undefined> {
  let text = reading.get(file);
  if (!text) {
    text = readFile(file, 'latin1')
      .catch(() => undefined)
      .finally(() => reading.delete(file));
    reading.set(file, text);
  }
  return text;
}

/**
 * An address as the kernel prints it there: each 32-bit word of the network-order address
 * read in the host's byte order, as 8 upper-case hex digits (`127.0.0.1` → `0100007F` on x86).
 */
function procAddress(bytes: number[]): string {
  const buf = Buffer.from(bytes);
  let out = '';
  for (let i = 0; i < buf.length; i += 4) {
    const word = endianness() === 'LE' ? buf.readUInt32LE(i) : buf.readUInt32BE(i);
    out += word.toString(16).toUpperCase().padStart(8, '0');
  }
  return out;
}

const procPort = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');

/**
 * Bytes `socket` has handed to the kernel that its peer has not acknowledged yet, or
 * undefined where the kernel does not say (not Linux, /proc unreadable, the connection gone).
 */
export async function unacknowledgedBytes(socket: Socket): Promise<number | undefined> {
  const { localAddress, localPort, remoteAddress, remotePort } = socket;
  if (!localAddress || !remoteAddress || !localPort || !remotePort || !isIP(localAddress) || !isIP(remoteAddress)) return undefined;
  const local = ipaddr.parse(localAddress).toByteArray();
  const remote = ipaddr.parse(remoteAddress).toByteArray();
  const text = await table(local.length === 4 ? '/proc/net/tcp' : '/proc/net/tcp6');
  if (text === undefined) return undefined;
  // `sl: local rem st tx_queue:rx_queue …`
  const needle = ` ${procAddress(local)}:${procPort(localPort)} ${procAddress(remote)}:${procPort(remotePort)} ${ESTABLISHED} `;
  const at = text.indexOf(needle);
  if (at < 0) return undefined;
  const start = at + needle.length;
  const value = Number.parseInt(text.slice(start, start + 8), 16);
  return Number.isNaN(value) ? undefined : value;
}
