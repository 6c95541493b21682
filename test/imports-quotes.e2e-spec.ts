import { newWorkspace, type TestWorkspace } from './factories.js';
import { companyNames, importErrors, upload, useImportingApi, waitForImport } from './import-helpers.js';
import { createApiKey, findRole } from '#identity/accounts.js';
import { startPublicOrigin, workspaceWith, type PublicOrigin } from './public-origin.js';
import { expectError } from './rest-helpers.js';
import { signInAt } from './settings-client.js';

/**
 * CSV quoting in imports (docs/rest.md "Imports"; RFC 4180): a record whose quotes are
 * broken is refused alone, with its line, and the import goes on at the next line; a quote
 * that never closes makes the rest of the file one cell, so the import fails naming the line
 * where it opened. Every line of the file is accounted for (`linesRead`).
 */
describe('imports: CSV quotes', () => {
  const api = useImportingApi();
  const names = (ws: TestWorkspace) => companyNames(api.ds, ws.id);

  async function imported(ws: TestWorkspace, csv: string | Buffer) {
    const res = await upload(api.http, ws.keys.Admin, '?object=companies', csv);
    expect(res.status).toBe(202);
    const id = res.body.data.import.id as string;
    return { id, done: await waitForImport(api.http, ws.keys.Admin, id), errors: await importErrors(api.http, ws.keys.Admin, id) };
  }

  it('a bad closing quote ("x,"oops) costs that record only: refused with its line, every later line imported', async () => {
    const ws = await newWorkspace(api.ds, 'imp-q-close');
    const lines = ['name,domainName.primaryLinkUrl'];
    for (let row = 1; row <= 2999; row++) lines.push(row === 1500 ? '"name-bad,"oops' : `Row ${row},row${row}.com`);
    const { done, errors } = await imported(ws, lines.join('\n') + '\n');
    expect(done).toMatchObject({ status: 'completed', rowsRead: 2999, linesRead: 3000, created: 2998, failed: 1, error: null });
    expect(errors).toEqual([
      { row: 1500, line: 1501, messages: [expect.stringMatching(/^not a CSV record: Invalid Closing Quote: .*line 1501/)] },
    ]);
    const all = await names(ws);
    expect(all).toHaveLength(2998);
    expect(all).toContain('Row 1501');
    expect(all).toContain('Row 2999');
  });

  it('an unclosed quote fails the import naming the line where it opened; the rows before it are imported, and none after', async () => {
    const ws = await newWorkspace(api.ds, 'imp-q-open');
    const lines = ['name,domainName.primaryLinkUrl'];
    for (let row = 1; row <= 4999; row++) lines.push(row === 11 ? '"Unclosed,unclosed.com' : `Row ${row},row${row}.com`);
    const { done, errors } = await imported(ws, lines.join('\n') + '\n');
    expect(done).toMatchObject({ status: 'failed', rowsRead: 10, linesRead: 11, created: 10, failed: 0 });
    expect(done.error).toMatch(/^line 12: a quote opens a cell there and is never closed/);
    expect(done.error).toMatch(/lines 12 to 5000/);
    expect(errors).toEqual([]);
    expect(await names(ws)).toHaveLength(10);
  });

  it('reads RFC 4180 quoting: doubled quotes, line breaks and commas in cells, CRLF after a closing quote, no newline at the end', async () => {
    const ws = await newWorkspace(api.ds, 'imp-q-ok');
    const csv = [
      'name,domainName.primaryLinkUrl',
      '"Say ""hi""",a.com',
      '"Two\nlines, one cell",b.com',
      '"quoted",c.com\r',
      'Plain,"d.com"\r',
      'Empty domain,""',
      '"Last ""one""",',
    ].join('\n');
    const { done, errors } = await imported(ws, csv);
    expect(errors).toEqual([]);
    expect(done).toMatchObject({ status: 'completed', rowsRead: 6, linesRead: 8, created: 6 });
    const domains = await api.ds.query(
      'SELECT name, domain_primary_link_url AS d FROM companies WHERE workspace_id = $1 ORDER BY d, name',
      [ws.id],
    );
    expect(domains.map((r: { name: string | null; d: string | null }) => [r.d, r.name])).toEqual([
      ['a.com', 'Say "hi"'],
      ['b.com', 'Two\nlines, one cell'],
      ['c.com', 'quoted'],
      ['d.com', 'Plain'],
      [null, 'Empty domain'],
      [null, 'Last "one"'],
    ]);
  });

  it('a broken record that spans lines is refused with the line it starts on; refused shapes name the problem', async () => {
    const ws = await newWorkspace(api.ds, 'imp-q-shapes');
    const csv = [
      'name,domainName.primaryLinkUrl', // line 1
      'Good 1,g1.com', // 2, row 1
      '"Multi', // 3, row 2: a quoted cell over lines 3-4, then junk after its closing quote
      'line" junk,x.com',
      'Good 2,g2.com', // 5, row 3
      'Bro"ken,b.com', // 6, row 4: a quote inside an unquoted cell
      'One,two,three', // 7, row 5: three cells under a header of two
      'Lonely', // 8, row 6: one cell
      '', // 9: blank, skipped
      'Good 3,"g3.com"', // 10, row 7
    ].join('\r\n');
    const { done, errors } = await imported(ws, csv);
    expect(done).toMatchObject({ status: 'completed', rowsRead: 7, linesRead: 10, created: 3, failed: 4 });
    expect(errors).toEqual([
      { row: 2, line: 3, messages: [expect.stringMatching(/^not a CSV record: Invalid Closing Quote: .*line 4/)] },
      { row: 4, line: 6, messages: [expect.stringMatching(/^not a CSV record: Invalid Opening Quote: /)] },
      { row: 5, line: 7, messages: [expect.stringMatching(/^not a CSV record: Invalid Record Length: .*3 cells.*2/)] },
      { row: 6, line: 8, messages: [expect.stringMatching(/^not a CSV record: Invalid Record Length: .*1 cell\b/)] },
    ]);
    expect(await names(ws)).toEqual(['Good 1', 'Good 2', 'Good 3']);
  });

  it('reads quotes that straddle the 1 MB chunks the file is stored in', async () => {
    const ws = await newWorkspace(api.ds, 'imp-q-chunks');
    const CHUNK = 1024 * 1024;
    const head = 'name,domainName.primaryLinkUrl\n';
    const filler: string[] = [];
    let size = head.length;
    for (let i = 0; size < CHUNK - 200; i++) {
      const line = `Fill ${i},f${i}.com\n`;
      filler.push(line);
      size += line.length;
    }
    // Pad so the doubled quote of the next record sits across the chunk boundary: `"` is the chunk's last byte.
    const pad = CHUNK - size - '"Across '.length - 1;
    const across = `"Across ${'x'.repeat(pad)}""q""",a.com\n`;
    expect(head.length + filler.join('').length + across.indexOf('""')).toBe(CHUNK - 1);
    const tail = '"Quoted\nafter",z.com\n' + 'Tail,t.com\n';
    const { done, errors } = await imported(ws, head + filler.join('') + across + tail);
    expect(errors).toEqual([]);
    expect(done).toMatchObject({ status: 'completed', rowsRead: filler.length + 3, created: filler.length + 3 });
    const all = await names(ws);
    expect(all).toContain(`Across ${'x'.repeat(pad)}"q"`);
    expect(all).toContain('Quoted\nafter');
    expect(all).toContain('Tail');
  });

  it('a record over 1 MB is refused with its line, without holding the file; the next line is read', async () => {
    const ws = await newWorkspace(api.ds, 'imp-q-huge');
    const huge = `"${'y'.repeat(1024 * 1024 + 10)}",huge.com`;
    const csv = ['name,domainName.primaryLinkUrl', 'Before,b.com', huge, 'After,a.com'].join('\n');
    const { done, errors } = await imported(ws, csv);
    expect(done).toMatchObject({ status: 'completed', rowsRead: 3, linesRead: 4, created: 2, failed: 1 });
    expect(errors).toEqual([{ row: 2, line: 3, messages: [expect.stringMatching(/^not a CSV record: .*longer than 1048576 bytes/)] }]);
    expect(await names(ws)).toEqual(['After', 'Before']);
  });

  it('a header row with a broken or unclosed quote is 400 before anything is stored', async () => {
    const ws = await newWorkspace(api.ds, 'imp-q-header');
    const broken = await upload(api.http, ws.keys.Admin, '?object=companies', '"name"x,domainName.primaryLinkUrl\nA,a.com\n');
    expect(expectError(broken, 400, 'VALIDATION_FAILED')).toMatch(/header row.*Invalid Closing Quote/);
    const open = await upload(api.http, ws.keys.Admin, '?object=companies', '"name,domainName.primaryLinkUrl\nA,a.com\n');
    expect(expectError(open, 400, 'VALIDATION_FAILED')).toMatch(/header row.*quote .*never closed/);
    expect(await api.ds.query('SELECT id FROM imports WHERE workspace_id = $1', [ws.id])).toEqual([]);
  });
});

describe('imports: the settings page accounts for every line', () => {
  let origin: PublicOrigin;

  beforeAll(async () => {
    origin = await startPublicOrigin({ IMPORTS_WORKER: 'on', IMPORTS_HEARTBEAT_MS: '500' });
  }, 60_000);
  afterAll(() => origin?.close());

  it("shows rows and lines read, a refused row's line, and where an unclosed quote opened", async () => {
    const { workspace, people } = await workspaceWith(origin.ds, ['Admin'], 'imp-q-page');
    const key = await createApiKey(origin.ds, {
      workspaceId: workspace.id,
      role: await findRole(origin.ds, workspace.id, 'Admin'),
      name: 'import',
      expiresAt: new Date(Date.now() + 86_400_000),
    });
    const http = origin.api.getHttpServer();
    const run = async (csv: string) => {
      const res = await upload(http, key.secret, '?object=companies', csv);
      expect(res.status).toBe(202);
      return (await waitForImport(http, key.secret, res.body.data.import.id)).id as string;
    };
    const lines = [
      'name,domainName.primaryLinkUrl',
      ...Array.from({ length: 4999 }, (_, i) => (i === 2999 ? '"Bad,"oops' : `Row ${i + 1},r${i + 1}.com`)),
    ];
    const refused = await run(lines.join('\n') + '\n');
    const unclosed = await run(['name', 'Before', '"Never closed', 'After'].join('\n'));

    const browser = await signInAt(origin.url, people[0].email);
    await browser.go(`${origin.url}/settings/imports/${refused}`);
    const page = browser.lastBody;
    expect(page).toContain('4,999 rows read, 4,998 created, 0 updated, 1 refused (5,000 lines of the file)');
    expect(page).toMatch(
      /<td data-label="Row">3000<\/td>\s*<td data-label="Line">3001<\/td>\s*<td data-label="Why">not a CSV record: Invalid Closing Quote/,
    );
    await browser.go(`${origin.url}/settings/imports/${unclosed}`);
    const failed = browser.lastBody;
    expect(failed).toContain('>failed<');
    expect(failed).toContain('1 rows read, 1 created, 0 updated, 0 refused (2 lines of the file)');
    expect(failed).toContain('line 3: a quote opens a cell there and is never closed');
    await browser.go(`${origin.url}/settings/imports`);
    expect(browser.lastBody).toContain('(5,000 lines of the file)');
  }, 60_000);
});
