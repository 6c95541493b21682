import { setImmediate as nextTurn } from 'node:timers/promises';
import { definitionFor } from '../service/object-definitions.js';
import { CHUNK_BYTES, csvItems, type ImportItem } from './import-reader.js';

/** Reading an import's file (import-reader.ts): parsing never holds the event loop for more than a small piece of the file. */
describe('csvItems', () => {
  const def = definitionFor('companies');

  /** The file in 1 MB chunks, as the import worker reads it from Postgres. */
  async function* chunksOf(file: Buffer): AsyncGenerator<Buffer> {
    for (let at = 0; at < file.length; at += CHUNK_BYTES) yield file.subarray(at, at + CHUNK_BYTES);
  }

  it('gives the event loop a turn at least every 64 KiB, however many cells a row has', async () => {
    // 12 rows of 400,000 cells (~9.6 MB, a 1 MB chunk each), then a good row.
    const wide = 'x,'.repeat(399_999) + 'x';
    const file = Buffer.from(['name,domainName.primaryLinkUrl', ...Array(12).fill(wide), 'Good,good.com'].join('\n'));
    let turns = 0;
    let reading = true;
    const counting = (async () => {
      while (reading) {
        await nextTurn();
        turns++;
      }
    })();
    const items: ImportItem[] = [];
    for await (const batch of csvItems(chunksOf(file), def)) items.push(...batch);
    reading = false;
    await counting;
    expect(turns).toBeGreaterThanOrEqual(Math.floor(file.length / (64 * 1024)) - 1);
    expect(items).toHaveLength(13);
    expect(items[0]).toEqual({
      row: 1,
      line: 2,
      lastLine: 2,
      bytes: 'name,domainName.primaryLinkUrl\n'.length + wide.length + 1,
      problems: ['not a CSV record: Invalid Record Length: this record has 400000 cells, the header row 2'],
    });
    expect(items[12]).toMatchObject({ row: 13, line: 14, body: { name: 'Good', domainName: { primaryLinkUrl: 'good.com' } } });
  });
});
