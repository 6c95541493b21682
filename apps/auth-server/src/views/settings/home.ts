import type { AccountNoticeKind } from '#identity/accounts.js';
import { OTHER_OBJECTS, SETTINGS_PERMISSION_LABELS } from '#identity/roles.js';
import { RECORD_ACTIONS, RECORD_OBJECTS } from '#database/entities/index.js';
import { SECTIONS, allows, type SettingsContext } from '../../settings/settings-context.js';
import { html } from '../html.js';
import { settingsPage } from './layout.js';

const BLURBS: Record<string, string> = {
  'api-keys': 'Create and revoke keys for scripts and integrations.',
  apps: 'Register server apps that get OAuth tokens with client credentials.',
  'data-model': 'Objects of your own, and custom fields on every object.',
  imports: 'Load records from a CSV or NDJSON file and follow the import.',
  roles: 'What each role may do with records and settings.',
  members: 'Who is in the workspace, their roles, invite links.',
  webhooks: 'Get a signed POST at your URL whenever records change.',
  vault: 'Secrets your integrations use, such as a token a webhook sends; revealed only with your password.',
  audit: 'Every change made in these settings: who, what, when.',
};

const ACCOUNT_NOTICES: Record<AccountNoticeKind, string> = {
  signup_with_existing_email:
    'Someone tried to create an account with your e-mail address. Nothing was changed; if it was not you, there is nothing to do.',
};

export function homePage(
  ctx: SettingsContext,
  o: { notice?: string; accountNotices?: { kind: AccountNoticeKind; createdAt: Date }[] },
): string {
  const sections = SECTIONS.filter((s) => s.key !== 'home' && allows(ctx.role, s.requires));
  // The standard objects, then "other objects" (the role's "*" entry: the workspace's own objects it does not name).
  const objectSummary = [...RECORD_OBJECTS, OTHER_OBJECTS].map((object) => {
    const actions = RECORD_ACTIONS.filter((a) => ctx.role.objectPermissions[object]?.[a]);
    return `${object === OTHER_OBJECTS ? 'other objects' : object}: ${actions.length === RECORD_ACTIONS.length ? 'all' : actions.join(', ') || 'none'}`;
  });
  return settingsPage(ctx, {
    title: 'Settings',
    active: 'home',
    body: html` <h1>${ctx.workspace.name}</h1>
      ${o.notice ? html`<p class="success" role="status">${o.notice}</p>` : html``}
      ${(o.accountNotices ?? []).map((n) => html`<p class="notice" role="status">${n.createdAt.toISOString().slice(0, 16).replace('T', ' ')} UTC: ${ACCOUNT_NOTICES[n.kind] ?? n.kind}</p>`)}
      <section class="panel">
        <h2>Your role: ${ctx.role.name}</h2>
        <p class="muted">
          ${objectSummary.join(' · ')}<br />Settings:
          ${ctx.role.settingsPermissions.map((p) => SETTINGS_PERMISSION_LABELS[p]).join(', ') || 'none'}
        </p>
      </section>
      ${
        sections.length
          ? html`<div class="cards">
              ${sections.map((s) => html`<a href="${s.href}"><strong>${s.label}</strong><br /><span class="muted">${BLURBS[s.key] ?? ''}</span></a>`)}
            </div>`
          : html`<p class="muted">
              Your role has no settings permissions in this workspace. An Admin can change that on the Members page.
            </p>`
      }
      ${
        ctx.workspaces.length > 1
          ? html` <h2 class="gap-top">Your workspaces</h2>
              <ul>
                ${ctx.workspaces.map((w) => html`<li>${w.name} <span class="muted">(${w.role})</span>${w.id === ctx.workspace.id ? html` <span class="badge ok">current</span>` : html``}</li>`)}
              </ul>`
          : html``
      }`,
  });
}
