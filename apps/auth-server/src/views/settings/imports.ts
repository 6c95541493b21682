import type { ImportSummary } from '#records/imports/import-summary.js';
import type { RefusedRow } from '#records/imports/imports.service.js';
import type { SettingsContext } from '../../settings/settings-context.js';
import { csrfField, errorBox, html, type Html } from '../html.js';
import { UTC_NOTE, settingsPage, when } from './layout.js';

const ENDED = ['completed', 'failed', 'cancelled'];

function statusBadge(s: ImportSummary): Html {
  const kind = s.status === 'completed' ? (s.failed ? 'warn' : 'ok') : s.status === 'failed' ? 'warn' : 'off';
  return html`<span class="badge ${kind}" data-import-status>${s.status}</span>`;
}

/** What the import did so far, in words (the page's script shows the same words as the import runs). */
export function countsText(s: ImportSummary): string {
  const n = (v: number) => v.toLocaleString('en-US');
  // Lines too (a CSV record may span lines, blank lines are no rows): every line of the file is accounted for.
  const unchanged = s.mode === 'upsert' ? `, ${n(s.unchanged)} unchanged` : '';
  return `${n(s.rowsRead)} rows read, ${n(s.created)} created, ${n(s.updated)} updated, ${n(s.failed)} refused${unchanged} (${n(s.linesRead)} lines of the file)`;
}

export const percentText = (s: ImportSummary) => `${Math.floor(s.progress * 100)}%`;

export const downloadText = (failed: number) =>
  `Download the ${failed.toLocaleString('en-US')} refused row${failed === 1 ? '' : 's'} (CSV)`;

function counts(s: ImportSummary): Html {
  return html`<span data-import-counts>${countsText(s)}</span>`;
}

/** /settings/imports: upload a file, then follow it on its own page. */
export function importsPage(ctx: SettingsContext, o: { objects: string[]; imports: ImportSummary[]; error?: string }): string {
  return settingsPage(ctx, {
    title: 'Import',
    active: 'imports',
    body: html` <h1>Import</h1>
      <p class="muted">
        Load records into ${ctx.workspace.name} from a CSV file (a header row of field paths such as <code>name</code>,
        <code>domainName.primaryLinkUrl</code>, or a custom field's name) or an NDJSON file (one JSON object a line, as a REST create takes
        it). Rows that are refused are listed with the reason; the others are imported. See
        <a href="/docs/rest#imports">the imports guide</a>.
      </p>
      <section class="panel" aria-labelledby="new-import">
        <h2 id="new-import">New import</h2>
        ${errorBox(o.error)}
        ${
          o.objects.length
            ? html`<form class="stack" id="import-form" method="post" action="/settings/imports" data-csrf="${ctx.csrf}">
                ${csrfField(ctx.csrf)}
                <label for="import-object">Object</label>
                <select id="import-object" name="object">
                  ${o.objects.map((plural) => html`<option value="${plural}">${plural}</option>`)}
                </select>
                <label for="import-mode">Mode</label>
                <select id="import-mode" name="mode" aria-describedby="import-mode-hint">
                  <option value="create">Create a record for every row</option>
                  <option value="upsert">Upsert: update the records that match, create the others</option>
                </select>
                <p class="hint" id="import-mode-hint">
                  Upsert matches a row by its <code>id</code>, then by the object's unique fields (such as a company's domain); a match is
                  updated with the columns the file gives, only when a value differs.
                </p>
                <label for="import-file">File (.csv, .ndjson or .jsonl, up to 512 MB)</label>
                <input id="import-file" name="file" type="file" accept=".csv,.ndjson,.jsonl,text/csv,application/x-ndjson" required />
                <p class="hint" id="import-upload-status" role="status"></p>
                <p class="error" id="import-error" role="alert" hidden></p>
                <button type="submit" id="import-submit" disabled>Upload and import</button>
                <noscript
                  ><p class="hint">Uploading from this page needs JavaScript; the CLI and the REST API import without it.</p></noscript
                >
              </form>`
            : html`<p class="muted">Your role "${ctx.role.name}" cannot create records, so it cannot import.</p>`
        }
      </section>
      <h2 class="gap-top">Recent imports</h2>
      <div class="table-wrap">
        <table>
          <caption class="sr-only">
            Recent imports of ${ctx.workspace.name}
          </caption>
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Object</th>
              <th scope="col">Status</th>
              <th scope="col">Rows</th>
              <th scope="col"><span class="sr-only">Details</span></th>
            </tr>
          </thead>
          <tbody>
            ${
              o.imports.length
                ? o.imports.map(
                    (s) =>
                      html`<tr>
                        <td data-label="Started">${when(s.createdAt)}</td>
                        <td data-label="Object">${s.object}</td>
                        <td data-label="Status">${statusBadge(s)}</td>
                        <td data-label="Rows">${counts(s)}</td>
                        <td data-label="">
                          <a href="/settings/imports/${s.id}">Details<span class="sr-only"> of the import of ${when(s.createdAt)}</span></a>
                        </td>
                      </tr>`,
                  )
                : html`<tr>
                    <td colspan="5" class="muted">No imports yet.</td>
                  </tr>`
            }
          </tbody>
        </table>
      </div>
      ${UTC_NOTE}`,
  });
}

/**
 * One import: its progress while it waits and runs (the page's script follows it: status,
 * counts, progress, start and end times), then the refused rows, all of them as CSV.
 */
export function importPage(ctx: SettingsContext, o: { summary: ImportSummary; errors: RefusedRow[] }): string {
  const s = o.summary;
  const running = !ENDED.includes(s.status);
  const csv = `/settings/imports/${s.id}/errors?format=csv`;
  return settingsPage(ctx, {
    title: 'Import',
    active: 'imports',
    body: html` <h1>Import of ${s.object}</h1>
      <section class="panel" id="import-progress" data-import-id="${s.id}" data-running="${running ? 'true' : 'false'}">
        <p>Status: ${statusBadge(s)} ${s.error ? html`<span class="error" role="alert">${s.error}</span>` : html``}</p>
        <label for="import-bar">Progress</label>
        <p class="progress-line">
          <progress id="import-bar" max="1" value="${s.progress}">${percentText(s)}</progress>
          <span data-import-percent>${percentText(s)}</span>
        </p>
        <p aria-live="polite">${counts(s)}</p>
        <p class="muted">
          ${s.format.toUpperCase()}, mode ${s.mode}, uploaded ${when(s.createdAt, undefined, 'second')}, started
          <span data-import-started>${when(s.startedAt, 'not yet', 'second')}</span>, ended
          <span data-import-ended>${when(s.finishedAt, 'not yet', 'second')}</span>.
        </p>
        ${
          running
            ? html`<form method="post" action="/settings/imports/${s.id}/cancel">
                ${csrfField(ctx.csrf)}
                <button type="submit" class="secondary">Cancel the import</button>
                <p class="hint">Rows already imported stay.</p>
              </form>`
            : html``
        }
      </section>
      <h2 class="gap-top">Refused rows</h2>
      <p id="import-download" ${s.failed ? html`` : html`hidden`}>
        <a href="${csv}" download data-import-download>${downloadText(s.failed)}</a>
        <span class="hint"
          >— each with its row number and why; with an API key: <code>GET /rest/imports/${s.id}/errors?format=csv</code></span
        >
      </p>
      ${
        o.errors.length
          ? html`<div class="table-wrap">
                <table>
                  <caption class="sr-only">
                    Refused rows
                  </caption>
                  <thead>
                    <tr>
                      <th scope="col">Row</th>
                      <th scope="col">Line</th>
                      <th scope="col">Why</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${o.errors.map(
                      (e) =>
                        html`<tr>
                          <td data-label="Row">${e.row}</td>
                          <td data-label="Line">${e.line ?? ''}</td>
                          <td data-label="Why">${e.messages.join('; ')}</td>
                        </tr>`,
                    )}
                  </tbody>
                </table>
              </div>
              ${s.failed > o.errors.length ? html`<p class="hint">The first ${o.errors.length} of ${s.failed}; the download has every one.</p>` : html``}`
          : html`<p class="muted">${running ? 'None so far.' : 'None.'}</p>`
      }
      <p><a href="/settings/imports">All imports</a></p>`,
  });
}
