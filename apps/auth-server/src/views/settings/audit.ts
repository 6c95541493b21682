import type { AuditRow } from '#identity/audit-log.js';
import type { SettingsContext } from '../../settings/settings-context.js';
import { html, type Html } from '../html.js';
import { UTC_NOTE, settingsPage, when } from './layout.js';

const ACTIONS: Record<string, string> = {
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
  'field.create': 'Added field',
  'field.update': 'Changed field',
  'field.delete': 'Deleted field',
  'field.unique': 'Changed uniqueness of field',
  'vault.create': 'Added vault secret',
  'vault.rotate': 'Rotated vault secret',
  'vault.update': 'Changed vault secret description',
  'vault.delete': 'Deleted vault secret',
  'vault.reveal': 'Revealed vault secret',
};

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
    else items.push(`${key}: ${value}`);
  }
  return items.length
    ? html`<ul class="perm-list">
        ${items.map((i) => html`<li>${i}</li>`)}
      </ul>`
    : html``;
}

export function auditPage(ctx: SettingsContext, o: { entries: AuditRow[]; next?: string; paged: boolean }): string {
  return settingsPage(ctx, {
    title: 'Audit log',
    active: 'audit',
    body: html` <h1>Audit log</h1>
      <p class="muted">Every change made in the settings of ${ctx.workspace.name}, newest first. Secrets are never recorded.</p>
      <div class="table-wrap">
        <table>
          <caption class="sr-only">
            Audit log
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
                        <td data-label="When">${when(e.createdAt)}</td>
                        <td class="email" data-label="Who">${e.actorEmail}</td>
                        <td title="${e.action}" data-label="What">${ACTIONS[e.action] ?? e.action}</td>
                        <td class="email" data-label="Target">${e.targetLabel}</td>
                        <td data-label="Details">${details(e.details)}</td>
                      </tr>`,
                  )
                : html`<tr>
                    <td colspan="5" class="muted">Nothing yet.</td>
                  </tr>`
            }
          </tbody>
        </table>
      </div>
      ${UTC_NOTE}
      <p class="actions">
        ${o.paged ? html`<a href="/settings/audit">Newest</a>` : html``}${o.next ? html`<a href="/settings/audit?before=${o.next}">Older entries</a>` : html``}
      </p>`,
  });
}
