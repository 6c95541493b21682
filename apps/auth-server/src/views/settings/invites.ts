import type { Invite } from '#identity/invites.js';
import { csrfField, errorAbout, errorBox, fieldError, html, page } from '../html.js';
import { newPasswordField } from '../pages.js';

/** The page behind an invite link: join (signed in), or sign in / create an account first. */
export function invitePage(o: {
  invite: Invite;
  token: string;
  csrf: string;
  signedInAs?: string;
  error?: string;
  email?: string;
}): string {
  const path = `/settings/invites/${o.token}`;
  return page(
    `Join ${o.invite.workspaceName}`,
    html` <h1>Join ${o.invite.workspaceName}</h1>
      <p>You are invited to join <strong>${o.invite.workspaceName}</strong> with the role <strong>${o.invite.roleName}</strong>.</p>
      ${errorBox(o.error)}
      ${
        o.signedInAs
          ? html` <form method="post" action="${path}">
                ${csrfField(o.csrf)}
                <p>You are signed in as <strong>${o.signedInAs}</strong>.</p>
                <button type="submit">Join workspace</button>
              </form>
              <p class="muted">Not you? <a href="/logout">Sign out</a>, then open the link again.</p>`
          : html` <p><a class="button" href="/login?return=${encodeURIComponent(path)}">Sign in to join</a></p>
              <h2>New here? Create your account</h2>
              <form method="post" action="${path}/signup">
                ${csrfField(o.csrf)}
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
                <button type="submit">Create account and join</button>
              </form>`
      }`,
  );
}
