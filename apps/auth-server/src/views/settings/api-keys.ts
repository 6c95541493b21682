import type { ApiKeySummary } from '#identity/api-keys.js';
import type { CreatedApiKey } from '#identity/accounts.js';
import { API_KEY_EXPIRY_CHOICES, DEFAULT_API_KEY_EXPIRY } from '#identity/api-key-expiry.js';
import type { RoleEntity } from '#database/entities/index.js';
import type { SettingsContext } from '../../settings/settings-context.js';
import { csrfField, errorAbout, errorBox, fieldError, html, type Html } from '../html.js';
import { COPY_STATUS, UTC_NOTE, relative, secretField, settingsPage, when } from './layout.js';

export const EXPIRY_LABELS: Record<keyof typeof API_KEY_EXPIRY_CHOICES, string> = {
  '15d': '15 days',
  '30d': '30 days',
  '90d': '90 days',
  '1y': '1 year',
};

const STATUS: Record<ApiKeySummary['status'], Html> = {
  active: html`<span class="badge ok">Active</span>`,
  expired: html`<span class="badge warn">Expired</span>`,
  revoked: html`<span class="badge off">Revoked</span>`,
};

export function apiKeysPage(
  ctx: SettingsContext,
  o: {
    keys: ApiKeySummary[];
    roles: RoleEntity[];
    /** Revoked keys are listed (`?include=revoked`); otherwise `revokedCount` of them are left out. */
    showRevoked: boolean;
    revokedCount: number;
    error?: string;
    values?: Record<string, string>;
    notice?: string;
  },
): string {
  const v = o.values ?? {};
  const expiry = v.expiration ?? DEFAULT_API_KEY_EXPIRY;
  return settingsPage(ctx, {
    title: 'API keys',
    active: 'api-keys',
    body: html` <h1>API keys</h1>
      <p class="muted">
        Keys let scripts and integrations call <code>/rest</code>, <code>/graphql</code> and <code>/mcp</code> with
        <code>Authorization: Bearer …</code>, acting with the key's role in ${ctx.workspace.name}.
      </p>
      ${o.notice ? html`<p class="success" role="status">${o.notice}</p>` : html``}
      <div class="table-wrap">
        <table>
          <caption class="sr-only">
            API keys of ${ctx.workspace.name}
          </caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">Last used</th>
              <th scope="col">Status</th>
              <th scope="col"><span class="sr-only">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            ${
              o.keys.length
                ? o.keys.map(
                    (k) =>
                      html` <tr>
                        <td data-label="Name">${k.name}</td>
                        <td data-label="Role">${k.role.name}</td>
                        <td data-label="Created">
                          ${when(k.createdAt)}${k.createdByEmail ? html`<br /><span class="muted email">by ${k.createdByEmail}</span>` : html``}
                        </td>
                        <td data-label="Expires">
                          ${when(k.expiresAt)}${k.status === 'active' ? html`<br /><span class="muted">${relative(k.expiresAt)}</span>` : html``}
                        </td>
                        <td data-label="Last used">${when(k.lastUsedAt, 'never')}</td>
                        <td data-label="Status">${STATUS[k.status]}</td>
                        <td data-label="">
                          ${k.status === 'revoked' ? html`` : html`<a class="link-danger" href="/settings/api-keys/${k.id}/revoke">Revoke<span class="sr-only"> ${k.name}</span></a>`}
                        </td>
                      </tr>`,
                  )
                : html`<tr>
                    <td colspan="7" class="muted">${o.revokedCount ? 'No API keys in use.' : 'No API keys yet.'}</td>
                  </tr>`
            }
          </tbody>
        </table>
      </div>
      ${UTC_NOTE} ${revokedToggle(o)}

      <section class="panel gap-top" aria-labelledby="create-key">
        <h2 id="create-key">Create an API key</h2>
        ${errorBox(o.error)}
        <form class="stack" method="post" action="/settings/api-keys">
          ${csrfField(ctx.csrf)}
          <label for="key-name">Name</label>
          <input
            id="key-name"
            name="name"
            required
            maxlength="100"
            value="${v.name ?? ''}"
            ${fieldError(errorAbout(o.error, 'name'), 'key-name-hint')}
          />
          <p class="hint" id="key-name-hint">Where the key is used, e.g. "Zapier sync" or "CI import".</p>
          <label for="key-role">Role</label>
          <select id="key-role" name="role" required${fieldError(errorAbout(o.error, 'role'), 'key-role-hint')}>
            <option value="" ${v.role ? html`` : html` selected`} disabled>Choose a role</option>
            ${o.roles.map((r) => html`<option value="${r.id}" ${r.id === v.role ? html` selected` : html``}>${r.name}</option>`)}
          </select>
          <p class="hint" id="key-role-hint">Only roles assignable to API keys. A key never gets settings access.</p>
          <label for="key-expiration">Expiration</label>
          <select id="key-expiration" name="expiration">
            ${Object.entries(EXPIRY_LABELS).map(([value, label]) => html`<option value="${value}" ${value === expiry ? html` selected` : html``}>${label}</option>`)}
          </select>
          <button type="submit">Create API key</button>
        </form>
      </section>`,
  });
}

/** Revoked keys never work again: the list leaves them out until asked for. */
function revokedToggle(o: { showRevoked: boolean; revokedCount: number }): Html {
  if (o.showRevoked) return html`<p><a href="/settings/api-keys">Hide revoked keys</a></p>`;
  if (!o.revokedCount) return html``;
  return html`<p><a href="/settings/api-keys?include=revoked">Show ${o.revokedCount} revoked key${o.revokedCount === 1 ? '' : 's'}</a></p>`;
}

export function apiKeyCreatedPage(ctx: SettingsContext, key: CreatedApiKey, publicUrl: string): string {
  return settingsPage(ctx, {
    title: 'API key created',
    active: 'api-keys',
    body: html` <h1>API key created</h1>
      <section class="panel">
        <p class="notice" role="alert">
          <strong>Copy this key now: it is shown only once.</strong> Keep it in a secret manager (1Password, Vault, your CI's secrets),
          never in code or chat.
        </p>
        ${secretField('api-key-secret', `Secret of "${key.name}"`, key.secret)} ${COPY_STATUS}
        <p>Role <strong>${key.role}</strong>, expires ${when(key.expiresAt)}.</p>
        <p>Try it:</p>
        <pre><code>curl -H "Authorization: Bearer ${key.secret}" ${publicUrl}/rest/companies</code></pre>
        <a class="button" href="/settings/api-keys">Done</a>
      </section>`,
  });
}

export function revokeApiKeyPage(ctx: SettingsContext, key: ApiKeySummary): string {
  return settingsPage(ctx, {
    title: 'Revoke API key',
    active: 'api-keys',
    body: html` <h1>Revoke "${key.name}"?</h1>
      <section class="panel">
        <p>Anything using this key gets <strong>401</strong> from its next request, on every server. This cannot be undone.</p>
        <p class="muted">Role ${key.role.name} · created ${when(key.createdAt)} · last used ${when(key.lastUsedAt, 'never')}</p>
        <form method="post" action="/settings/api-keys/${key.id}/revoke">
          ${csrfField(ctx.csrf)}
          <div class="actions">
            <button type="submit" class="danger">Revoke</button>
            <a class="button secondary" href="/settings/api-keys">Cancel</a>
          </div>
        </form>
      </section>`,
  });
}

/** A reload, or the back button, after a secret was shown. */
export function secretGonePage(ctx: SettingsContext, o: { what: string; active: string; back: string }): string {
  return settingsPage(ctx, {
    title: 'Shown only once',
    active: o.active,
    body: html` <h1>Shown only once</h1>
      <section class="panel">
        <p>The ${o.what} was shown once and is not stored anywhere it could be shown from again.</p>
        <p>If you did not copy it, revoke it and create a new one.</p>
        <a class="button" href="${o.back}">Back</a>
      </section>`,
  });
}
