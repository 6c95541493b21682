import { headersToLines, MAX_HEADERS, referencedNames } from '#webhooks/headers.js';
import type { WebhookAttempt, WebhookSummary } from '#webhooks/webhooks.js';
import { allows, type SettingsContext } from '../../settings/settings-context.js';
import { csrfField, errorAbout, errorBox, fieldError, html, type Html } from '../html.js';
import { COPY_STATUS, UTC_NOTE, secretField, settingsPage, when } from './layout.js';

function status(w: WebhookSummary): Html {
  if (w.enabled)
    return w.failingSince
      ? html`<span class="badge warn">Failing since ${when(w.failingSince)}</span>`
      : html`<span class="badge ok">Enabled</span>`;
  return w.disabledReason ? html`<span class="badge warn">Disabled after failures</span>` : html`<span class="badge off">Disabled</span>`;
}

function disabledBox(w: WebhookSummary): Html {
  return html`${w.disabledReason ? html`<p class="error" role="alert"><strong>${w.url}</strong>: ${w.disabledReason}</p>` : html``}${
    w.role.name === null
      ? html`<p class="error" role="alert">
          <strong>${w.url}</strong> delivers as a role that was deleted, so nothing is sent to it. Saving the webhook makes it deliver as
          your role.
        </p>`
      : html``
  }`;
}

/**
 * The member's password, asked on the forms that can send vault secrets somewhere new while
 * the last one typed is older than 5 minutes; only members who may use the vault see it.
 */
function passwordField(ctx: SettingsContext, passwordFresh: boolean): Html {
  if (passwordFresh || !allows(ctx.role, 'VAULT')) return html``;
  return html`<label for="wh-password">Your password <span class="muted">(when the headers name a vault secret)</span></label>
    <input id="wh-password" name="password" type="password" autocomplete="current-password" aria-describedby="wh-password-hint" />
    <p class="hint" id="wh-password-hint">
      Sending vault secrets to a new URL or in new headers needs your password, asked again 5 minutes after you last typed it.
    </p>`;
}

function headersField(value: string, error: string | undefined): Html {
  return html`<label for="wh-headers">Custom headers <span class="muted">(optional)</span></label>
    <textarea
      id="wh-headers"
      name="headers"
      rows="3"
      spellcheck="false"
      placeholder="Authorization: Bearer {{vault.CRM_TOKEN}}"
      ${fieldError(errorAbout(error, 'headers'), 'wh-headers-hint')}
    >
${value}</textarea>
    <p class="hint" id="wh-headers-hint">
      One <code>Name: value</code> per line, at most ${MAX_HEADERS}. Keep secrets in the <a href="/settings/vault">vault</a> and name them
      as <code>{{vault.NAME}}</code>: the value is filled in only when an event is sent.
    </p>`;
}

function operationsHint(eventTypes: string[]): Html {
  return html`<p class="hint" id="wh-ops-hint">
    Comma-separated patterns <code>&lt;object&gt;.&lt;action&gt;</code>; <code>*</code> stands for any part: <code>*.*</code> (everything),
    <code>person.*</code>, <code>company.created</code>. Events: ${eventTypes.join(', ')}.
  </p>`;
}

export function webhooksPage(
  ctx: SettingsContext,
  o: {
    webhooks: WebhookSummary[];
    eventTypes: string[];
    passwordFresh: boolean;
    error?: string;
    values?: Record<string, string>;
    notice?: string;
  },
): string {
  const v = o.values ?? {};
  return settingsPage(ctx, {
    title: 'Webhooks',
    active: 'webhooks',
    body: html` <h1>Webhooks</h1>
      <p class="muted">
        ${ctx.workspace.name} sends a signed <code>POST</code> (Standard Webhooks) to each URL when records are created, updated or deleted,
        retried for 24 hours until it answers 2xx. See <a href="/docs/webhooks">the webhooks guide</a>.
      </p>
      ${o.notice ? html`<p class="success" role="status">${o.notice}</p>` : html``} ${o.webhooks.map(disabledBox)}
      <div class="table-wrap">
        <table>
          <caption class="sr-only">
            Webhooks of ${ctx.workspace.name}
          </caption>
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Operations</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
              <th scope="col"><span class="sr-only">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            ${
              o.webhooks.length
                ? o.webhooks.map(
                    (w) =>
                      html` <tr>
                        <td class="email" data-label="URL">
                          <code>${w.url}</code>${w.description ? html`<br /><span class="muted">${w.description}</span>` : html``}
                        </td>
                        <td data-label="Operations">${w.operations.join(', ')}</td>
                        <td data-label="Status">${status(w)}<br /><span class="muted">as ${w.role.name ?? 'a deleted role'}</span></td>
                        <td data-label="Created">${when(w.createdAt)}</td>
                        <td data-label="">
                          <a href="/settings/webhooks/${w.id}">Edit and deliveries<span class="sr-only"> of ${w.url}</span></a
                          ><br /><a class="link-danger" href="/settings/webhooks/${w.id}/delete"
                            >Delete<span class="sr-only"> ${w.url}</span></a
                          >
                        </td>
                      </tr>`,
                  )
                : html`<tr>
                    <td colspan="5" class="muted">No webhooks yet.</td>
                  </tr>`
            }
          </tbody>
        </table>
      </div>
      ${UTC_NOTE}

      <section class="panel gap-top" aria-labelledby="create-webhook">
        <h2 id="create-webhook">Add a webhook</h2>
        ${errorBox(o.error)}
        <form class="stack" method="post" action="/settings/webhooks">
          ${csrfField(ctx.csrf)}
          <label for="wh-url">URL</label>
          <input
            id="wh-url"
            name="url"
            type="url"
            required
            maxlength="2048"
            placeholder="https://example.com/hooks/crm"
            value="${v.url ?? ''}"
            ${fieldError(errorAbout(o.error, 'url'))}
          />
          <label for="wh-description">Description</label>
          <input
            id="wh-description"
            name="description"
            maxlength="500"
            value="${v.description ?? ''}"
            ${fieldError(errorAbout(o.error, 'description'))}
          />
          <label for="wh-operations">Operations</label>
          <input
            id="wh-operations"
            name="operations"
            required
            value="${v.operations ?? '*.*'}"
            ${fieldError(errorAbout(o.error, 'operations'), 'wh-ops-hint')}
          />
          ${operationsHint(o.eventTypes)} ${headersField(v.headers ?? '', o.error)} ${passwordField(ctx, o.passwordFresh)}
          <p class="hint">It sends only what your role (${ctx.role.name}) may read.</p>
          <button type="submit">Add webhook</button>
        </form>
      </section>`,
  });
}

export function webhookCreatedPage(ctx: SettingsContext, created: { id: string; url: string; secret: string }): string {
  return settingsPage(ctx, {
    title: 'Webhook added',
    active: 'webhooks',
    body: html` <h1>Webhook added</h1>
      <section class="panel">
        <p class="notice" role="alert">
          <strong>Copy the signing secret now.</strong> Keep it in a secret manager; your endpoint verifies every delivery with it. You can
          reveal it again later on the webhook's page.
        </p>
        ${secretField('webhook-secret', `Signing secret for ${created.url}`, created.secret)} ${COPY_STATUS}
        <a class="button" href="/settings/webhooks/${created.id}">Done</a>
      </section>`,
  });
}

export function webhookSecretPage(ctx: SettingsContext, o: { webhook: WebhookSummary; secret: string }): string {
  return settingsPage(ctx, {
    title: 'Webhook secret',
    active: 'webhooks',
    body: html` <h1>Signing secret</h1>
      <section class="panel">
        ${secretField('webhook-secret', `Signing secret for ${o.webhook.url}`, o.secret)} ${COPY_STATUS}
        <p class="muted">This reveal is recorded in the audit log.</p>
        <a class="button" href="/settings/webhooks/${o.webhook.id}">Back</a>
      </section>`,
  });
}

function attemptStatus(a: WebhookAttempt): Html {
  if (a.deliveryStatus === 'skipped') return html`<span class="badge off">Skipped</span><br /><span class="muted">${a.error ?? ''}</span>`;
  const outcome = a.statusCode !== null ? `HTTP ${a.statusCode}` : (a.error ?? 'no answer');
  const ok = a.statusCode !== null && a.statusCode >= 200 && a.statusCode < 300;
  return ok ? html`<span class="badge ok">${outcome}</span>` : html`<span class="badge warn">${outcome}</span>`;
}

function attemptResponse(a: WebhookAttempt): Html {
  if (a.responseWithheld) return html`<span class="muted">not kept: vault values were sent</span>`;
  return a.responseExcerpt ? html`<code class="excerpt">${a.responseExcerpt.slice(0, 200)}</code>` : html``;
}

function attemptRow(ctx: SettingsContext, webhookId: string, a: WebhookAttempt): Html {
  return html` <tr>
    <td data-label="Time">${when(a.attemptedAt)}</td>
    <td data-label="Event">
      <code>${a.eventType}</code><br /><span class="muted"><code>${a.eventId}</code> · attempt ${a.attempt}</span>
    </td>
    <td data-label="Status">${attemptStatus(a)}</td>
    <td data-label="Duration">${a.durationMs} ms</td>
    <td data-label="Response">${attemptResponse(a)}</td>
    <td data-label="">
      <form method="post" action="/settings/webhooks/${webhookId}/deliveries/${a.deliveryId}/redeliver">
        ${csrfField(ctx.csrf)}<button type="submit" class="secondary" aria-label="Redeliver event ${a.eventId}">Redeliver</button>
      </form>
    </td>
  </tr>`;
}

/** Above the attempts: a signed `webhook.test` event, shown in the log like any attempt; a disabled webhook sends nothing. */
function testEventForm(ctx: SettingsContext, w: WebhookSummary): Html {
  if (!w.enabled) return html`<p class="hint">Enable the webhook to send it a test event.</p>`;
  return html`<form method="post" action="/settings/webhooks/${w.id}/test" class="row-form">
    ${csrfField(ctx.csrf)}<button type="submit" class="secondary" aria-describedby="test-event-hint">Send test event</button>
    <span class="hint" id="test-event-hint">A signed <code>webhook.test</code> event, to this webhook only; nothing else changes.</span>
  </form>`;
}

/** Above the attempts of a webhook that sends vault secrets: Redeliver and a test event send them again, so they need the password first. */
function redeliverPassword(ctx: SettingsContext, w: WebhookSummary, passwordFresh: boolean): Html {
  if (passwordFresh || !referencedNames(w.headers).length || !allows(ctx.role, 'VAULT')) return html``;
  return html`<form method="post" action="/settings/webhooks/${w.id}/password" class="panel stack">
    ${csrfField(ctx.csrf)}
    <label for="redeliver-password">Your password, to redeliver or send a test event</label>
    <input
      id="redeliver-password"
      name="password"
      type="password"
      autocomplete="current-password"
      required
      aria-describedby="redeliver-password-hint"
    />
    <p class="hint" id="redeliver-password-hint">
      This webhook sends vault secrets: Redeliver and Send test event work for 5 minutes after your password.
    </p>
    <button type="submit" class="secondary">Confirm password</button>
  </form>`;
}

export function editWebhookPage(
  ctx: SettingsContext,
  o: {
    webhook: WebhookSummary;
    attempts: WebhookAttempt[];
    passwordFresh: boolean;
    error?: string;
    values?: Record<string, string>;
    notice?: string;
  },
): string {
  const w = o.webhook;
  const v = o.values ?? {};
  const enabled = o.values ? v.enabled === 'on' : w.enabled;
  return settingsPage(ctx, {
    title: 'Webhook',
    active: 'webhooks',
    body: html` <h1>Webhook <code>${w.url}</code></h1>
      ${o.notice ? html`<p class="success" role="status">${o.notice}</p>` : html``} ${disabledBox(w)}
      <section class="panel" aria-labelledby="edit-webhook">
        <h2 id="edit-webhook">Settings</h2>
        ${errorBox(o.error)}
        <form class="stack" method="post" action="/settings/webhooks/${w.id}">
          ${csrfField(ctx.csrf)}
          <label for="wh-url">URL</label>
          <input
            id="wh-url"
            name="url"
            type="url"
            required
            maxlength="2048"
            value="${v.url ?? w.url}"
            ${fieldError(errorAbout(o.error, 'url'))}
          />
          <label for="wh-description">Description</label>
          <input
            id="wh-description"
            name="description"
            maxlength="500"
            value="${v.description ?? w.description}"
            ${fieldError(errorAbout(o.error, 'description'))}
          />
          <label for="wh-operations">Operations</label>
          <input
            id="wh-operations"
            name="operations"
            required
            value="${v.operations ?? w.operations.join(', ')}"
            ${fieldError(errorAbout(o.error, 'operations'))}
          />
          ${headersField(v.headers ?? headersToLines(w.headers), o.error)}
          <label class="check"><input type="checkbox" name="enabled" ${enabled ? html` checked` : html``} /> Enabled</label>
          ${passwordField(ctx, o.passwordFresh)}
          <p class="hint">
            Delivers as ${w.role.name === null ? html`a deleted role` : html`<strong>${w.role.name}</strong>`}: each event carries only what
            that role may read. Saving makes it deliver as your role (${ctx.role.name}).
          </p>
          <button type="submit">Save</button>
        </form>
        <form method="post" action="/settings/webhooks/${w.id}/secret" class="gap-top">
          ${csrfField(ctx.csrf)}
          <button type="submit" class="secondary">Reveal signing secret</button>
        </form>
      </section>

      <h2 class="gap-top">Recent attempts</h2>
      ${redeliverPassword(ctx, w, o.passwordFresh)} ${testEventForm(ctx, w)}
      <div class="table-wrap">
        <table>
          <caption class="sr-only">
            Delivery attempts to ${w.url}, newest first
          </caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Duration</th>
              <th scope="col">Response</th>
              <th scope="col"><span class="sr-only">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            ${
              o.attempts.length
                ? o.attempts.map((a) => attemptRow(ctx, w.id, a))
                : html`<tr>
                    <td colspan="6" class="muted">No attempts yet.</td>
                  </tr>`
            }
          </tbody>
        </table>
      </div>
      ${UTC_NOTE}
      <p><a href="/settings/webhooks">All webhooks</a></p>`,
  });
}

export function confirmDeleteWebhookPage(ctx: SettingsContext, w: WebhookSummary): string {
  return settingsPage(ctx, {
    title: 'Delete webhook',
    active: 'webhooks',
    body: html` <h1>Delete the webhook to <code>${w.url}</code>?</h1>
      <section class="panel">
        <p>No more events are sent to it, including retries still waiting, and its delivery log is deleted. This cannot be undone.</p>
        <form method="post" action="/settings/webhooks/${w.id}/delete">
          ${csrfField(ctx.csrf)}
          <div class="actions">
            <button type="submit" class="danger">Delete webhook</button>
            <a class="button secondary" href="/settings/webhooks">Cancel</a>
          </div>
        </form>
      </section>`,
  });
}
