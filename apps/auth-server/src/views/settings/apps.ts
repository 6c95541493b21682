import type { ServerAppSummary } from '#identity/server-apps.js';
import type { RoleEntity } from '#database/entities/index.js';
import type { SettingsContext } from '../../settings/settings-context.js';
import { csrfField, errorAbout, errorBox, fieldError, html } from '../html.js';
import { COPY_STATUS, UTC_NOTE, secretField, settingsPage, when } from './layout.js';

export function appsPage(
  ctx: SettingsContext,
  o: { apps: ServerAppSummary[]; roles: RoleEntity[]; error?: string; values?: Record<string, string>; notice?: string },
): string {
  const v = o.values ?? {};
  return settingsPage(ctx, {
    title: 'Server apps',
    active: 'apps',
    body: html` <h1>Server apps</h1>
      <p class="muted">
        A server app gets OAuth access tokens with the <code>client_credentials</code> grant and acts with its role in
        ${ctx.workspace.name}, like an API key whose tokens expire every 30 minutes.
      </p>
      ${o.notice ? html`<p class="success" role="status">${o.notice}</p>` : html``}
      <div class="table-wrap">
        <table>
          <caption class="sr-only">
            Server apps of ${ctx.workspace.name}
          </caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Client ID</th>
              <th scope="col">Role</th>
              <th scope="col">Created</th>
              <th scope="col"><span class="sr-only">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            ${
              o.apps.length
                ? o.apps.map(
                    (a) =>
                      html` <tr>
                        <td data-label="Name">${a.name}</td>
                        <td data-label="Client ID"><code>${a.clientId}</code></td>
                        <td data-label="Role">${a.role.name}</td>
                        <td data-label="Created">
                          ${when(a.createdAt)}${a.createdByEmail ? html`<br /><span class="muted email">by ${a.createdByEmail}</span>` : html``}
                        </td>
                        <td data-label="">
                          <a href="/settings/apps/${a.id}/rotate">Rotate secret<span class="sr-only"> of ${a.name}</span></a
                          ><br /><a class="link-danger" href="/settings/apps/${a.id}/delete"
                            >Delete<span class="sr-only"> ${a.name}</span></a
                          >
                        </td>
                      </tr>`,
                  )
                : html`<tr>
                    <td colspan="5" class="muted">No server apps yet.</td>
                  </tr>`
            }
          </tbody>
        </table>
      </div>
      ${UTC_NOTE}

      <section class="panel gap-top" aria-labelledby="create-app">
        <h2 id="create-app">Register a server app</h2>
        ${errorBox(o.error)}
        <form class="stack" method="post" action="/settings/apps">
          ${csrfField(ctx.csrf)}
          <label for="app-name">Name</label>
          <input id="app-name" name="name" required maxlength="100" value="${v.name ?? ''}" ${fieldError(errorAbout(o.error, 'name'))} />
          <label for="app-role">Role</label>
          <select id="app-role" name="role" required${fieldError(errorAbout(o.error, 'role'), 'app-role-hint')}>
            <option value="" ${v.role ? html`` : html` selected`} disabled>Choose a role</option>
            ${o.roles.map((r) => html`<option value="${r.id}" ${r.id === v.role ? html` selected` : html``}>${r.name}</option>`)}
          </select>
          <p class="hint" id="app-role-hint">Only roles assignable to API keys.</p>
          <button type="submit">Register app</button>
        </form>
      </section>`,
  });
}

export function appSecretPage(
  ctx: SettingsContext,
  o: { app: { name: string; clientId: string; clientSecret: string; role?: string }; rotated: boolean; publicUrl: string },
): string {
  return settingsPage(ctx, {
    title: o.rotated ? 'New client secret' : 'Server app registered',
    active: 'apps',
    body: html` <h1>${o.rotated ? `New secret for "${o.app.name}"` : `"${o.app.name}" registered`}</h1>
      <section class="panel">
        <p class="notice" role="alert">
          <strong>Copy the client secret now: it is shown only once.</strong> Keep it in a secret
          manager.${o.rotated ? ' The previous secret no longer works.' : ''}
        </p>
        ${secretField('app-client-id', 'Client ID', o.app.clientId)}
        ${secretField('app-client-secret', 'Client secret', o.app.clientSecret)} ${COPY_STATUS}
        <p>Get a token (valid 30 minutes), then call the API with it:</p>
        <pre><code>curl -u "${o.app.clientId}:${o.app.clientSecret}" -d grant_type=client_credentials -d scope=api ${o.publicUrl}/oauth/token</code></pre>
        <a class="button" href="/settings/apps">Done</a>
      </section>`,
  });
}

export function confirmAppPage(ctx: SettingsContext, o: { app: ServerAppSummary; action: 'rotate' | 'delete' }): string {
  const rotate = o.action === 'rotate';
  return settingsPage(ctx, {
    title: rotate ? 'Rotate secret' : 'Delete server app',
    active: 'apps',
    body: html` <h1>${rotate ? `Rotate the secret of "${o.app.name}"?` : `Delete "${o.app.name}"?`}</h1>
      <section class="panel">
        <p>
          ${
            rotate
              ? 'A new secret is shown once. The current secret stops working at once; tokens already issued run out within 30 minutes.'
              : 'The app can no longer get tokens, and the tokens it holds are refused from their next use. This cannot be undone.'
          }
        </p>
        <p class="muted">Client ID <code>${o.app.clientId}</code> · role ${o.app.role.name}</p>
        <form method="post" action="/settings/apps/${o.app.id}/${o.action}">
          ${csrfField(ctx.csrf)}
          <div class="actions">
            <button type="submit" class="danger">${rotate ? 'Rotate secret' : 'Delete app'}</button>
            <a class="button secondary" href="/settings/apps">Cancel</a>
          </div>
        </form>
      </section>`,
  });
}
