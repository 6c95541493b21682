import { AUDIT_ACTIONS, auditGroupOf, type AuditAction, type AuditFilter, type AuditRow } from '#identity/audit-log.js';
import type { SettingsContext } from '../../settings/settings-context.js';
import { errorAbout, errorBox, fieldError, html, type Html } from '../html.js';
import { UTC_NOTE, settingsPage, when } from './layout.js';

const ACTIONS: Record<AuditAction, string> = {
  'api_key.create': 'Created API key',
  'api_key.revoke': 'Revoked API key',
  'role.create': 'Created role',
  'role.update': 'Changed role',
  'role.delete': 'Deleted role',
  'server_app.create': 'Registered server app',
  'server_app.rotate_secret': 'Rotated app secret',
  'server_app.delete': 'Deleted server app',
  'member.change_role': 'Changed member role',
  'member.remove': 'Removed member',
  'invite.create': 'Created invite link',
  'invite.revoke': 'Cancelled invite',
  'invite.accept': 'Joined by invite',
  'webhook.create': 'Created webhook',
  'webhook.update': 'Changed webhook',
  'webhook.delete': 'Deleted webhook',
  'webhook.reveal_secret': 'Revealed webhook secret',
  'webhook.redeliver': 'Redelivered webhook event',
  'webhook.test': 'Sent webhook test event',
  'field.create': 'Added field',
  'field.update': 'Changed field',
  'field.delete': 'Deleted field',
  'field.unique': 'Changed uniqueness of field',
  'object.create': 'Added object',
  'object.update': 'Changed object',
  'object.delete': 'Deleted object',
  'vault.create': 'Added vault secret',
  'vault.rotate': 'Rotated vault secret',
  'vault.update': 'Changed vault secret description',
  'vault.delete': 'Deleted vault secret',
  'vault.reveal': 'Revealed vault secret',
  'import.start': 'Started import',
  'import.end': 'Import ended',
  'import.cancel': 'Cancelled import',
};

/** The filter's groups of actions, in the order of the navigation: the group's name, and its "any" choice. */
const GROUPS: Record<string, [string, string]> = {
  api_key: ['API keys', 'Any API key action'],
  server_app: ['Server apps', 'Any server app action'],
  webhook: ['Webhooks', 'Any webhook action'],
  vault: ['Vault', 'Any vault action'],
  field: ['Data model', 'Any data model action'],
  import: ['Imports', 'Any import action'],
  role: ['Roles', 'Any role action'],
  member: ['Members', 'Any member action'],
  invite: ['Invites', 'Any invite action'],
};

/** Detail keys as people read them; counts and sizes as numbers people read. */
const DETAIL_WORDS: Record<string, string> = { rowsRead: 'rows read', bytes: 'size' };

function detailValue(key: string, value: unknown): string {
  if (key === 'bytes' && typeof value === 'number') return size(value);
  return typeof value === 'number' ? value.toLocaleString('en-US') : String(value);
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const [n, unit] = bytes < 1024 ** 2 ? [bytes / 1024, 'KB'] : bytes < 1024 ** 3 ? [bytes / 1024 ** 2, 'MB'] : [bytes / 1024 ** 3, 'GB'];
  return `${n.toFixed(1)} ${unit}`;
}

const HIDDEN = new Set(['inviteId']);

/** What changed, for people: "Viewer → Member", lists as lists, dates as dates; ids stay in the database. */
function details(d: Record<string, unknown>): Html {
  const items: string[] = [];
  if (typeof d.from === 'string' && typeof d.to === 'string') items.push(`${d.from} → ${d.to}`);
  for (const [key, value] of Object.entries(d ?? {})) {
    if (HIDDEN.has(key) || key === 'from' || key === 'to') continue;
    if (key === 'changes' && Array.isArray(value)) items.push(...value.map(String));
    else if (Array.isArray(value)) items.push(`${key}: ${value.join(', ') || 'none'}`);
    else if (key === 'expiresAt') items.push(`expires ${String(value).slice(0, 10)}`);
    else items.push(`${DETAIL_WORDS[key] ?? key}: ${detailValue(key, value)}`);
  }
  return items.length
    ? html`<ul class="perm-list">
        ${items.map((i) => html`<li>${i}</li>`)}
      </ul>`
    : html``;
}

/** Who and what: the members' e-mails offered as you type (an API key or the CLI can be typed as the log shows it). */
function filterForm(o: { filter: AuditFilter; actors: string[]; filtered: boolean; error?: string }): Html {
  const chosen = o.filter.action ?? '';
  const option = (value: string, label: string) =>
    value === chosen ? html`<option value="${value}" selected>${label}</option>` : html`<option value="${value}">${label}</option>`;
  return html` <form class="filters" method="get" action="/settings/audit" role="search" aria-label="Filter the audit log">
    ${errorBox(o.error)}
    <div>
      <label for="audit-actor">Who</label>
      <input
        id="audit-actor"
        name="actor"
        list="audit-actors"
        maxlength="320"
        autocomplete="off"
        spellcheck="false"
        value="${o.filter.actor ?? ''}"
        aria-describedby="audit-actor-hint"
        ${fieldError(errorAbout(o.error, 'actor'))}
      />
      <datalist id="audit-actors">${o.actors.map((a) => html`<option value="${a}"></option>`)}</datalist>
    </div>
    <div>
      <label for="audit-action">What</label>
      <select id="audit-action" name="action" ${fieldError(errorAbout(o.error, 'action'))}>
        ${option('', 'Any action')}
        ${Object.entries(GROUPS).map(
          ([group, [label, any]]) =>
            html`<optgroup label="${label}">
              ${option(`${group}.*`, any)} ${AUDIT_ACTIONS.filter((a) => auditGroupOf(a) === group).map((a) => option(a, ACTIONS[a]))}
            </optgroup>`,
        )}
      </select>
    </div>
    <div class="actions">
      <button type="submit">Filter</button>${o.filtered ? html`<a href="/settings/audit">Show everything</a>` : html``}
    </div>
    <p class="hint" id="audit-actor-hint">Who: an e-mail, or <code>API key "name"</code> as the log shows it.</p>
  </form>`;
}

export function auditPage(
  ctx: SettingsContext,
  o: { entries: AuditRow[]; next?: string; paged: boolean; filter: AuditFilter; actors: string[]; error?: string },
): string {
  const filtered = o.filter.actor !== undefined || o.filter.action !== undefined;
  const query = (extra: Record<string, string>) =>
    new URLSearchParams(
      Object.entries({ actor: o.filter.actor, action: o.filter.action, ...extra }).filter((e): e is [string, string] => e[1] !== undefined),
    ).toString();
  const newest = query({});
  return settingsPage(ctx, {
    title: 'Audit log',
    active: 'audit',
    body: html` <h1>Audit log</h1>
      <p class="muted">
        Every change made in the settings of ${ctx.workspace.name} (and the same changes through the APIs), and every import, newest first.
        Secrets are never recorded.
      </p>
      ${filterForm({ ...o, filtered })}
      <div class="table-wrap">
        <table>
          <caption class="sr-only">
            Audit log${filtered ? ', filtered' : ''}
          </caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">What</th>
              <th scope="col">Target</th>
              <th scope="col">Details</th>
            </tr>
          </thead>
          <tbody>
            ${
              o.entries.length
                ? o.entries.map(
                    (e) =>
                      html` <tr>
                        <td data-label="When">${when(e.createdAt, undefined, 'second')}</td>
                        <td class="email" data-label="Who">${e.actorEmail}</td>
                        <td title="${e.action}" data-label="What">${ACTIONS[e.action] ?? e.action}</td>
                        <td class="email" data-label="Target">${e.targetLabel}</td>
                        <td data-label="Details">${details(e.details)}</td>
                      </tr>`,
                  )
                : html`<tr>
                    <td colspan="5" class="muted">${filtered ? 'Nothing matches.' : 'Nothing yet.'}</td>
                  </tr>`
            }
          </tbody>
        </table>
      </div>
      ${UTC_NOTE}
      <p class="actions">
        ${o.paged ? html`<a href="/settings/audit${newest ? `?${newest}` : ''}">Newest</a>` : html``}${
          o.next ? html`<a href="/settings/audit?${query({ before: o.next })}">Older entries</a>` : html``
        }
      </p>`,
  });
}
