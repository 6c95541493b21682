import { MAX_DESCRIPTION, MAX_VALUE_BYTES, type VaultSecret } from '#identity/vault.js';
import type { SettingsContext } from '../../settings/settings-context.js';
import { csrfField, errorAbout, errorBox, fieldError, html, type Html } from '../html.js';
import { COPY_STATUS, UTC_NOTE, settingsPage, when } from './layout.js';

/*
 * /settings/vault (docs/vault.md). A value is typed in and never shown back, except on the
 * reveal page, after the password, for the time the page's script keeps it
 * (`data-hide-after`, SETTINGS_JS in layout.ts).
 */

function valueField(id: string, label: string, error: string | undefined): Html {
  return html`<label for="${id}">${label}</label>
    <textarea
      id="${id}"
      name="value"
      rows="3"
      required
      autocomplete="off"
      spellcheck="false"
      ${fieldError(errorAbout(error, 'value'), `${id}-hint`)}
    ></textarea>
    <p class="hint" id="${id}-hint">
      At most ${MAX_VALUE_BYTES} bytes. It is encrypted at once and never shown again without your password.
    </p>`;
}

export function vaultPage(
  ctx: SettingsContext,
  o: { secrets: VaultSecret[]; error?: string; values?: Record<string, string>; notice?: string },
): string {
  const v = o.values ?? {};
  return settingsPage(ctx, {
    title: 'Vault',
    active: 'vault',
    body: html` <h1>Vault</h1>
      <p class="muted">
        Secrets ${ctx.workspace.name} uses to call other systems, such as a token a webhook sends as
        <code>Authorization: Bearer {{vault.CRM_TOKEN}}</code>. Values are encrypted; API keys and apps can list, add, rotate and delete
        them but never read one. See <a href="/docs/vault">the vault guide</a>.
      </p>
      ${o.notice ? html`<p class="success" role="status">${o.notice}</p>` : html``}
      <div class="table-wrap">
        <table>
          <caption class="sr-only">
            Vault secrets of ${ctx.workspace.name}
          </caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Description</th>
              <th scope="col">Created</th>
              <th scope="col">Rotated</th>
              <th scope="col">Last used</th>
              <th scope="col"><span class="sr-only">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            ${
              o.secrets.length
                ? o.secrets.map(
                    (s) =>
                      html` <tr>
                        <td data-label="Name"><code>${s.name}</code></td>
                        <td data-label="Description">${s.description}</td>
                        <td data-label="Created">${when(s.createdAt)}</td>
                        <td data-label="Rotated">${when(s.rotatedAt, 'never')}</td>
                        <td data-label="Last used">${when(s.lastUsedAt, 'never')}</td>
                        <td data-label="">
                          <a href="/settings/vault/${s.name}">Reveal, rotate or delete<span class="sr-only"> ${s.name}</span></a>
                        </td>
                      </tr>`,
                  )
                : html`<tr>
                    <td colspan="6" class="muted">No secrets yet.</td>
                  </tr>`
            }
          </tbody>
        </table>
      </div>
      ${UTC_NOTE}

      <section class="panel gap-top" aria-labelledby="add-secret">
        <h2 id="add-secret">Add a secret</h2>
        ${errorBox(o.error)}
        <form class="stack" method="post" action="/settings/vault">
          ${csrfField(ctx.csrf)}
          <label for="vault-name">Name</label>
          <input
            id="vault-name"
            name="name"
            required
            maxlength="64"
            pattern="[A-Z][A-Z0-9_]{0,63}"
            autocomplete="off"
            spellcheck="false"
            placeholder="CRM_TOKEN"
            value="${v.name ?? ''}"
            ${fieldError(errorAbout(o.error, 'name'), 'vault-name-hint')}
          />
          <p class="hint" id="vault-name-hint">Capital letters, digits and <code>_</code>, starting with a letter; at most 64.</p>
          ${valueField('vault-value', 'Value', o.error)}
          <label for="vault-description">Description</label>
          <input
            id="vault-description"
            name="description"
            maxlength="${MAX_DESCRIPTION}"
            value="${v.description ?? ''}"
            ${fieldError(errorAbout(o.error, 'description'))}
          />
          <button type="submit">Add secret</button>
        </form>
      </section>`,
  });
}

function revealForm(ctx: SettingsContext, s: VaultSecret, o: { passwordFresh: boolean; error?: string }): Html {
  return html`<form class="stack" method="post" action="/settings/vault/${s.name}/reveal">
    ${csrfField(ctx.csrf)} ${errorBox(o.error, 'reveal-error')}
    <label for="reveal-password"
      >Your password${o.passwordFresh ? html` <span class="muted">(not needed for a few more minutes)</span>` : html``}</label
    >
    <input
      id="reveal-password"
      name="password"
      type="password"
      autocomplete="current-password"
      ${o.passwordFresh ? html`` : html` required`}
      ${o.error ? html` aria-invalid="true" aria-describedby="reveal-error reveal-hint"` : html` aria-describedby="reveal-hint"`}
    />
    <p class="hint" id="reveal-hint">
      Asked again 5 minutes after you last typed it. The value shows for 30 seconds; every reveal is recorded in the audit log.
    </p>
    <button type="submit">Reveal value</button>
  </form>`;
}

export function vaultSecretPage(
  ctx: SettingsContext,
  o: { secret: VaultSecret; passwordFresh: boolean; notice?: string; error?: string; revealError?: string },
): string {
  const s = o.secret;
  return settingsPage(ctx, {
    title: `Vault secret ${s.name}`,
    active: 'vault',
    body: html` <h1>Vault secret <code>${s.name}</code></h1>
      ${o.notice ? html`<p class="success" role="status">${o.notice}</p>` : html``}
      ${s.description ? html`<p>${s.description}</p>` : html``}
      <p class="muted">
        Created ${when(s.createdAt)} · rotated ${when(s.rotatedAt, 'never')} · last used by a webhook ${when(s.lastUsedAt, 'never')}
      </p>
      ${UTC_NOTE}
      <section class="panel" aria-labelledby="reveal-secret">
        <h2 id="reveal-secret">Reveal the value</h2>
        ${revealForm(ctx, s, { passwordFresh: o.passwordFresh, error: o.revealError })}
      </section>
      <section class="panel gap-top" aria-labelledby="rotate-secret">
        <h2 id="rotate-secret">Rotate</h2>
        ${errorBox(o.error)}
        <form class="stack" method="post" action="/settings/vault/${s.name}/rotate">
          ${csrfField(ctx.csrf)} ${valueField('rotate-value', 'New value', o.error)}
          <button type="submit">Rotate secret</button>
        </form>
        <form class="stack gap-top" method="post" action="/settings/vault/${s.name}">
          ${csrfField(ctx.csrf)}
          <label for="vault-description">Description</label>
          <input id="vault-description" name="description" maxlength="${MAX_DESCRIPTION}" value="${s.description}" />
          <button type="submit" class="secondary">Save description</button>
        </form>
      </section>
      <p class="gap-top">
        <a class="link-danger" href="/settings/vault/${s.name}/delete">Delete ${s.name}</a> ·
        <a href="/settings/vault">All secrets</a>
      </p>`,
  });
}

/** The value, for 30 seconds: the script empties and removes it then (the page works, and shows it, without the script). */
export function vaultRevealedPage(ctx: SettingsContext, o: { secret: VaultSecret; value: string; hideAfterSeconds: number }): string {
  const s = o.secret;
  return settingsPage(ctx, {
    title: `Vault secret ${s.name}`,
    active: 'vault',
    body: html` <h1>Vault secret <code>${s.name}</code></h1>
      <section class="panel">
        <div id="vault-revealed" data-hide-after="${o.hideAfterSeconds}" data-hidden-notice="vault-hidden">
          <label for="vault-secret-value">Value of ${s.name}</label>
          <div class="secret">
            <textarea id="vault-secret-value" readonly rows="3" autocomplete="off" spellcheck="false">${o.value}</textarea>
            <button type="button" class="secondary" data-copy="vault-secret-value" hidden>Copy</button>
          </div>
          <p class="muted">Shown for ${o.hideAfterSeconds} seconds. This reveal is recorded in the audit log.</p>
        </div>
        <p id="vault-hidden" role="status" hidden>The value is hidden again. Reveal it again on the secret's page if you need it.</p>
        ${COPY_STATUS}
        <a class="button" href="/settings/vault/${s.name}">Back</a>
      </section>`,
  });
}

export function confirmDeleteSecretPage(ctx: SettingsContext, s: VaultSecret): string {
  return settingsPage(ctx, {
    title: 'Delete vault secret',
    active: 'vault',
    body: html` <h1>Delete <code>${s.name}</code>?</h1>
      <section class="panel">
        <p>The value is gone for good. A webhook header that names it must be changed first.</p>
        <form method="post" action="/settings/vault/${s.name}/delete">
          ${csrfField(ctx.csrf)}
          <div class="actions">
            <button type="submit" class="danger">Delete secret</button>
            <a class="button secondary" href="/settings/vault/${s.name}">Cancel</a>
          </div>
        </form>
      </section>`,
  });
}
