import { PASSWORD_MIN_LENGTH } from '#identity/accounts.js';
import { csrfField, errorAbout, errorBox, fieldError, html, page, type Html } from './html.js';

/**
 * A new-password field stating the rule the validation applies (from its constant, so the
 * two cannot drift); `error` marks it when the error is about the password.
 */
export function newPasswordField(error: string | undefined): Html {
  return html`<label for="password">Password</label>
    <input
      id="password"
      name="password"
      type="password"
      autocomplete="new-password"
      minlength="${PASSWORD_MIN_LENGTH}"
      required${fieldError(errorAbout(error, 'password'), 'password-rules')}
    />
    <p class="hint" id="password-rules">At least ${PASSWORD_MIN_LENGTH} characters.</p>`;
}

/** Each scope in words (docs/authentication.md "Scopes"); a scope without words (`openid`) is not shown. */
const SCOPE_LABELS: Record<string, string> = {
  api: 'Everything your role allows in the workspace: read, create, change and delete records, change the data model, manage the vault',
  'records:read': 'Read records',
  'records:write': 'Create and change records',
  'records:delete': 'Delete records',
  'data_model:write': 'Read and change the data model (custom objects and fields)',
  profile: 'See your e-mail address',
  offline_access: 'Stay connected when you are away',
};

export function loginPage(o: {
  action: string;
  csrf: string;
  email?: string;
  error?: string;
  notice?: string;
  returnTo?: string;
  signupHref: string;
}): string {
  return page(
    'Sign in',
    html` <h1>Sign in</h1>
      ${o.notice ? html`<p class="success" role="status">${o.notice}</p>` : html``} ${errorBox(o.error)}
      <form method="post" action="${o.action}">
        ${csrfField(o.csrf)} ${o.returnTo ? html`<input type="hidden" name="return" value="${o.returnTo}" />` : html``}
        <label for="email">Email</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="username"
          required
          value="${o.email ?? ''}"
          ${fieldError(errorAbout(o.error, 'e-mail', 'email'))}
        />
        <label for="password">Password</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="current-password"
          required${fieldError(errorAbout(o.error, 'password'))}
        />
        <button type="submit">Sign in</button>
      </form>
      <p class="muted">No account yet? <a href="${o.signupHref}">Create one with a new workspace</a>.</p>`,
  );
}

export function signupPage(o: { csrf: string; email?: string; workspace?: string; error?: string; returnTo?: string }): string {
  return page(
    'Sign up',
    html` <h1>Create your account</h1>
      ${errorBox(o.error)}
      <form method="post" action="/signup">
        ${csrfField(o.csrf)} ${o.returnTo ? html`<input type="hidden" name="return" value="${o.returnTo}" />` : html``}
        <label for="email">Email</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="username"
          required
          value="${o.email ?? ''}"
          ${fieldError(errorAbout(o.error, 'e-mail', 'email'))}
        />
        ${newPasswordField(o.error)}
        <label for="workspace">Workspace name</label>
        <input
          id="workspace"
          name="workspace"
          required
          maxlength="200"
          value="${o.workspace ?? ''}"
          ${fieldError(errorAbout(o.error, 'name', 'workspace'))}
        />
        <button type="submit">Sign up</button>
      </form>
      <p class="muted">
        Already have an account? <a href="/login${o.returnTo ? `?return=${encodeURIComponent(o.returnTo)}` : ''}">Sign in</a>.
      </p>`,
  );
}

export function workspacePickerPage(o: {
  action: string;
  csrf: string;
  clientName: string;
  workspaces: { id: string; name: string }[];
}): string {
  return page(
    'Choose a workspace',
    html` <h1>Choose a workspace</h1>
      <p><strong>${o.clientName}</strong> will act in one workspace.</p>
      <form method="post" action="${o.action}">
        ${csrfField(o.csrf)}
        <label for="workspace">Workspace</label>
        <select id="workspace" name="workspace" required>
          ${o.workspaces.map((w) => html`<option value="${w.id}">${w.name}</option>`)}
        </select>
        <button type="submit">Continue</button>
      </form>`,
  );
}

export function consentPage(o: {
  action: string;
  csrf: string;
  clientName: string;
  scopes: string[];
  workspace: string;
  email: string;
  redirectTo: string;
}): string {
  const labels = o.scopes.filter((s) => SCOPE_LABELS[s]);
  return page(
    'Allow access',
    html` <h1>Allow ${o.clientName}?</h1>
      <p><strong>${o.clientName}</strong> asks to act for <strong>${o.email}</strong> in the workspace <strong>${o.workspace}</strong>.</p>
      <p>It will be able to:</p>
      <ul class="scopes">
        ${labels.map((s) => html`<li>${SCOPE_LABELS[s]} <span class="muted">(${s})</span></li>`)}
      </ul>
      <p class="muted">What it can do is limited by your role in this workspace, checked on every call.</p>
      <p class="muted">After you answer you go back to <strong>${o.redirectTo}</strong>.</p>
      <form method="post" action="${o.action}">
        ${csrfField(o.csrf)}
        <div class="actions">
          <button type="submit" name="decision" value="allow">Allow</button>
          <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
        </div>
      </form>`,
  );
}

export function messagePage(title: string, message: string, link?: { href: string; label: string }): string {
  return page(
    title,
    html`<h1>${title}</h1>
      <p>${message}</p>
      ${link ? html`<p><a href="${link.href}">${link.label}</a></p>` : html``}`,
  );
}

export function logoutPage(o: { csrf: string; email: string }): string {
  return page(
    'Sign out',
    html` <h1>Sign out</h1>
      <p>You are signed in as <strong>${o.email}</strong>.</p>
      <form method="post" action="/logout">${csrfField(o.csrf)}<button type="submit">Sign out</button></form>`,
  );
}
