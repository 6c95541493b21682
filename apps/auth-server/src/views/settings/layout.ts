import { SECTIONS, allows, type SettingsContext } from '../../settings/settings-context.js';
import { csrfField, errorBox, html, page, type Html } from '../html.js';

export const SETTINGS_SCRIPT = '/settings/assets/settings.js';

/** Every settings page: the header with the workspace switcher, the navigation, the content. */
export function settingsPage(ctx: SettingsContext, o: { title: string; active: string; body: Html }): string {
  const sections = SECTIONS.filter((s) => allows(ctx.role, s.requires));
  const header = html` <div class="who">
    ${workspaceSwitcher(ctx)}
    <span class="muted">${ctx.email} · ${ctx.role.name}</span>
    <a href="/logout">Sign out</a>
  </div>`;
  const body = html` <div class="settings">
    <nav class="side" aria-label="Settings">
      <ul>
        ${sections.map((s) => html`<li><a href="${s.href}" ${s.key === o.active ? html` aria-current="page"` : html``}>${s.label}</a></li>`)}
      </ul>
    </nav>
    <div class="content" id="content" tabindex="-1">${o.body}</div>
  </div>`;
  return page(`${o.title} · ${ctx.workspace.name}`, body, { wide: true, header, script: SETTINGS_SCRIPT, contentInside: true });
}

function workspaceSwitcher(ctx: SettingsContext): Html {
  if (ctx.workspaces.length < 2) return html`<span><strong>${ctx.workspace.name}</strong></span>`;
  return html` <form class="switcher" method="post" action="/settings/workspace">
    ${csrfField(ctx.csrf)}
    <input type="hidden" name="return" value="${ctx.path}" />
    <label for="workspace-switch">Workspace</label>
    <select id="workspace-switch" name="workspace">
      ${ctx.workspaces.map((w) => html`<option value="${w.id}" ${w.id === ctx.workspace.id ? html` selected` : html``}>${w.name}</option>`)}
    </select>
    <button type="submit" class="secondary small">Switch</button>
  </form>`;
}

/** A page that only says something (403, 404, 409 …), inside the settings frame. */
export function settingsMessagePage(
  ctx: SettingsContext,
  o: { title: string; message: string; active?: string; back?: { href: string; label: string } },
): string {
  return settingsPage(ctx, {
    title: o.title,
    active: o.active ?? '',
    body: html`<h1>${o.title}</h1>
      ${errorBox(o.message)}${o.back ? html`<p><a href="${o.back.href}">${o.back.label}</a></p>` : html``}`,
  });
}

const MINUTE = 60_000;
const DAY = 86_400_000;

/**
 * A UTC timestamp people can read (pages say "times in UTC"), machine-readable in `datetime`;
 * to the minute, or to the second where the order of close events matters (the audit log, an import's progress).
 */
export function when(date: Date | string | null | undefined, fallback = '—', to: 'minute' | 'second' = 'minute'): Html {
  if (!date) return html`<span class="muted">${fallback}</span>`;
  const iso = new Date(date).toISOString();
  const shown = iso.slice(0, to === 'second' ? 19 : 16).replace('T', ' ');
  return html`<time datetime="${iso}" title="${iso}">${shown}</time>`;
}

/** "in 90 days", "3 hours ago". */
export function relative(date: Date | string, now = Date.now()): string {
  const diff = new Date(date).getTime() - now;
  const abs = Math.abs(diff);
  const [n, unit] =
    abs >= 2 * DAY
      ? [Math.round(abs / DAY), 'day']
      : abs >= 2 * 60 * MINUTE
        ? [Math.round(abs / (60 * MINUTE)), 'hour']
        : [Math.max(1, Math.round(abs / MINUTE)), 'minute'];
  const text = `${n} ${unit}${n === 1 ? '' : 's'}`;
  return diff >= 0 ? `in ${text}` : `${text} ago`;
}

/** A secret (or link) shown once: a read-only field and a copy button that JavaScript switches on. */
export function secretField(id: string, label: string, value: string): Html {
  return html` <label for="${id}">${label}</label>
    <div class="secret">
      <input id="${id}" type="text" readonly value="${value}" autocomplete="off" spellcheck="false" />
      <button type="button" class="secondary" data-copy="${id}" hidden>Copy</button>
    </div>`;
}

/** Under each table with times. */
export const UTC_NOTE = html`<p class="hint">Times are in UTC.</p>`;

export const COPY_STATUS = html`<p class="sr-only" role="status" id="copy-status"></p>`;

/** The copy buttons: progressive enhancement, the pages work without it. */
export const SETTINGS_JS = `
for (const button of document.querySelectorAll('[data-copy]')) {
  button.hidden = false;
  button.addEventListener('click', async () => {
    const field = document.getElementById(button.dataset.copy);
    const status = document.getElementById('copy-status');
    try {
      await navigator.clipboard.writeText(field.value);
    } catch {
      field.select();
      document.execCommand('copy');
    }
    button.textContent = 'Copied';
    if (status) status.textContent = 'Copied to the clipboard';
    setTimeout(() => { button.textContent = 'Copy'; }, 2000);
  });
}
for (const field of document.querySelectorAll('.secret input')) field.addEventListener('focus', () => field.select());

// A revealed vault value (views/settings/vault.ts) leaves the page after its time.
for (const shown of document.querySelectorAll('[data-hide-after]')) {
  setTimeout(() => {
    for (const field of shown.querySelectorAll('textarea, input')) field.value = '';
    shown.remove();
    const notice = document.getElementById(shown.dataset.hiddenNotice);
    if (notice) notice.hidden = false;
  }, Number(shown.dataset.hideAfter) * 1000);
}

// The roles form (views/settings/roles.ts): a field that cannot be read cannot be updated
// either ("update needs read"), so unticking Read unticks Update; ticking Read again leaves
// Update as it is.
for (const read of document.querySelectorAll('input[name="fieldRead"]')) {
  read.addEventListener('change', () => {
    const update = document.getElementById(read.id.replace(/-read$/, '-update'));
    if (!read.checked && update) update.checked = false;
  });
}

// Select option values (views/settings/data-model.ts) are capitals, digits and _: letters typed in lower case
// are upper-cased as they are typed, the caret left where it was (the same length: a-z only). In the Options box,
// only the VALUE before a line's | is; the label keeps its case.
const upperValue = (text) => text.replace(/[a-z]+/g, (letters) => letters.toUpperCase());
const upperLines = (text) => text.split('\\n').map((line) => {
  const bar = line.indexOf('|');
  return bar < 0 ? upperValue(line) : upperValue(line.slice(0, bar)) + line.slice(bar);
}).join('\\n');
for (const field of document.querySelectorAll('[data-option-values]')) {
  field.addEventListener('input', (event) => {
    if (event.isComposing) return;
    const next = field.dataset.optionValues === 'lines' ? upperLines(field.value) : upperValue(field.value);
    if (next === field.value) return;
    const { selectionStart, selectionEnd } = field;
    field.value = next;
    field.setSelectionRange(selectionStart, selectionEnd);
  });
}

// The Import panel (views/settings/imports.ts): the file goes as the request body, then its page follows it.
const importForm = document.getElementById('import-form');
if (importForm) {
  const submit = document.getElementById('import-submit');
  const status = document.getElementById('import-upload-status');
  const problem = document.getElementById('import-error');
  submit.disabled = false;
  importForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const file = document.getElementById('import-file').files[0];
    if (!file) return;
    const type = /\\.(ndjson|jsonl)$/i.test(file.name) ? 'application/x-ndjson' : 'text/csv';
    const query = new URLSearchParams({ object: document.getElementById('import-object').value, mode: document.getElementById('import-mode').value });
    submit.disabled = true;
    problem.hidden = true;
    status.textContent = 'Uploading ' + file.name + '…';
    try {
      const res = await fetch('/settings/imports?' + query, { method: 'POST', body: file, headers: { 'content-type': type, 'x-csrf-token': importForm.dataset.csrf } });
      const body = await res.json();
      if (res.ok) return void (location.href = body.location);
      problem.textContent = body.messages.join(' ');
    } catch {
      problem.textContent = 'The upload did not reach the server; try again.';
    }
    status.textContent = '';
    problem.hidden = false;
    submit.disabled = false;
  });
}
// An import's page (views/settings/imports.ts) follows it while it waits and runs: status, counts, progress,
// start and end times, the download of its refused rows; once it has ended, the page is loaded again with them.
const followed = document.getElementById('import-progress');
if (followed && followed.dataset.running === 'true') {
  const showTime = (slot, iso) => {
    if (!iso || slot.querySelector('time')?.dateTime === iso) return;
    const time = document.createElement('time');
    time.dateTime = iso;
    time.title = iso;
    time.textContent = iso.slice(0, 19).replace('T', ' ');
    slot.replaceChildren(time);
  };
  const poll = async () => {
    try {
      const res = await fetch('/settings/imports/' + followed.dataset.importId + '/status');
      if (res.ok) {
        const { data, shown } = await res.json();
        const s = data.import;
        document.getElementById('import-bar').value = s.progress;
        followed.querySelector('[data-import-status]').textContent = s.status;
        followed.querySelector('[data-import-counts]').textContent = shown.counts;
        followed.querySelector('[data-import-percent]').textContent = shown.percent;
        showTime(followed.querySelector('[data-import-started]'), s.startedAt);
        showTime(followed.querySelector('[data-import-ended]'), s.finishedAt);
        const download = document.getElementById('import-download');
        if (download && s.failed > 0) {
          download.querySelector('[data-import-download]').textContent = shown.download;
          download.hidden = false;
        }
        if (!['queued', 'running'].includes(s.status)) return void location.reload();
      }
    } catch {}
    setTimeout(poll, 700);
  };
  setTimeout(poll, 300);
}
`;
