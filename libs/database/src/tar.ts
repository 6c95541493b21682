import { once } from 'node:events';
import { open } from 'node:fs/promises';
import type { Writable } from 'node:stream';

/**
 * The backup archive's format: POSIX ustar (IEEE Std 1003.1, "pax", ustar Interchange
 * Format), which any `tar` reads, of regular files and directories only. Written here
 * because no tar library is among the dependencies and a backup needs only this much: a file
 * that shrinks or vanishes while it is read (a live cluster) must not break the archive.
 */
const BLOCK = 512;
/** The size field holds 11 octal digits; PostgreSQL splits relations into 1 GB segments. */
const MAX_SIZE = 8 ** 11 - 1;
const CHUNK = 1 << 20;

export interface TarEntry {
  name: string;
  type: 'file' | 'directory';
  mode: number;
  size: number;
}

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

/** `name` split into ustar's prefix (up to 155 bytes) and name (up to 100 bytes) at a slash. */
function splitName(name: string): { prefix: string; base: string } {
  if (Buffer.byteLength(name) <= 100) return { prefix: '', base: name };
  for (let i = name.indexOf('/'); i > 0; i = name.indexOf('/', i + 1)) {
    const prefix = name.slice(0, i);
    const base = name.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(base) <= 100) return { prefix, base };
  }
  throw new Error(`path too long for the archive: ${name}`);
}

function header(entry: TarEntry, mtime: number): Buffer {
  if (entry.size > MAX_SIZE) throw new Error(`file too large for the archive: ${entry.name}`);
  const block = Buffer.alloc(BLOCK);
  const { prefix, base } = splitName(entry.type === 'directory' ? `${entry.name}/` : entry.name);
  block.write(base, 0, 100, 'utf8');
  block.write(octal(entry.mode & 0o7777, 8), 100, 'ascii');
  block.write(octal(0, 8), 108, 'ascii');
  block.write(octal(0, 8), 116, 'ascii');
  block.write(octal(entry.type === 'file' ? entry.size : 0, 12), 124, 'ascii');
  block.write(octal(mtime, 12), 136, 'ascii');
  block.write('        ', 148, 'ascii');
  block.write(entry.type === 'file' ? '0' : '5', 156, 'ascii');
  block.write('ustar\0' + '00', 257, 'ascii');
  block.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'ascii');
  return block;
}

const padding = (size: number) => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

/** Writes entries to `out`, waiting for it to drain; `out` failing ends the write with its error. */
export class TarWriter {
  private readonly mtime = Math.floor(Date.now() / 1000);

  constructor(private readonly out: Writable) {}

  private async write(chunk: Buffer): Promise<void> {
    if (!this.out.write(chunk)) await once(this.out, 'drain');
  }

  async directory(name: string): Promise<void> {
    await this.write(header({ name, type: 'directory', mode: 0o700, size: 0 }, this.mtime));
  }

  async file(name: string, content: Buffer): Promise<void> {
    await this.write(header({ name, type: 'file', mode: 0o600, size: content.length }, this.mtime));
    await this.write(content);
    await this.write(padding(content.length));
  }

  /**
   * The file at `path` as it is while it is read, with the size it had when opened: bytes
   * written past that are left out, and a file that shrinks meanwhile is padded with zeros.
   * A server's data files may change under a backup, which WAL replay repairs (PostgreSQL docs,
   * "Making a Base Backup Using the Low Level API"). Returns the size, or undefined when the
   * file is gone (the server removed it; WAL replay does the same).
   */
  async fileFrom(name: string, path: string): Promise<number | undefined> {
    let handle;
    try {
      handle = await open(path, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    try {
      const { size } = await handle.stat();
      await this.write(header({ name, type: 'file', mode: 0o600, size }, this.mtime));
      let done = 0;
      while (done < size) {
        const buffer = Buffer.alloc(Math.min(CHUNK, size - done));
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, done);
        // Shrunk since it was opened: the rest reads as zeros.
        await this.write(bytesRead ? buffer.subarray(0, bytesRead) : buffer);
        done += bytesRead || buffer.length;
      }
      await this.write(padding(size));
      return size;
    } finally {
      await handle.close();
    }
  }

  /** The two zero blocks that end an archive; then `out` is ended. */
  async end(): Promise<void> {
    await this.write(Buffer.alloc(2 * BLOCK));
    this.out.end();
  }
}

/** Reads exact byte counts from a stream of chunks. */
class Bytes {
  private chunks: Buffer[] = [];
  private length = 0;
  private done = false;

  constructor(private readonly source: AsyncIterator<Buffer>) {}

  private async fill(n: number): Promise<void> {
    while (this.length < n && !this.done) {
      const next = await this.source.next();
      if (next.done) this.done = true;
      else {
        this.chunks.push(next.value);
        this.length += next.value.length;
      }
    }
  }

  /** Exactly `n` bytes, or fewer at the end of the stream. */
  async read(n: number): Promise<Buffer> {
    await this.fill(n);
    const all = Buffer.concat(this.chunks);
    this.chunks = [all.subarray(n)];
    this.length = all.length - Math.min(n, all.length);
    return all.subarray(0, n);
  }

  /** The next piece (at most CHUNK bytes) of `state.left` bytes still to read. */
  async piece(state: { left: number }): Promise<Buffer> {
    const piece = await this.read(Math.min(CHUNK, state.left));
    if (!piece.length) throw new Error('the archive ends in the middle of a file');
    state.left -= piece.length;
    return piece;
  }
}

function field(block: Buffer, start: number, length: number): string {
  const raw = block.subarray(start, start + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? length : end).toString('utf8');
}

function parseHeader(block: Buffer): TarEntry {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : block[i];
  if (Number.parseInt(field(block, 148, 8).trim(), 8) !== sum) throw new Error('not a tar archive (a header checksum does not match)');
  const type = String.fromCharCode(block[156]);
  const prefix = field(block, 345, 155);
  const name = (prefix ? `${prefix}/` : '') + field(block, 0, 100);
  if (type !== '0' && type !== '\0' && type !== '5') throw new Error(`unsupported archive entry ${name} (type ${type})`);
  return {
    name: name.replace(/\/$/, ''),
    type: type === '5' ? 'directory' : 'file',
    mode: Number.parseInt(field(block, 100, 8), 8),
    size: Number.parseInt(field(block, 124, 12).trim() || '0', 8),
  };
}

/**
 * The entries of an archive in order; each file's `content` must be read (or drained)
 * before the next entry is asked for.
 */
export async function* readTar(source: AsyncIterable<Buffer>): AsyncGenerator<{ entry: TarEntry; content: AsyncGenerator<Buffer> }> {
  const bytes = new Bytes(source[Symbol.asyncIterator]());
  for (;;) {
    const block = await bytes.read(BLOCK);
    if (block.length < BLOCK) throw new Error('the archive is cut short (no end-of-archive blocks)');
    if (block.every((b) => b === 0)) return;
    const entry = parseHeader(block);
    const size = entry.type === 'file' ? entry.size : 0;
    const state = { left: size };
    yield {
      entry,
      content: (async function* () {
        while (state.left > 0) yield await bytes.piece(state);
      })(),
    };
    // What the caller left unread.
    while (state.left > 0) await bytes.piece(state);
    await bytes.read(padding(size).length);
  }
}
