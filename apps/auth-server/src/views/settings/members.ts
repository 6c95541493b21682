import { INVITE_TTL_DAYS, type Invite } from '#identity/invites.js';
import type { Member } from '#identity/members.js';
import type { RoleEntity } from '#database/entities/index.js';
import type { SettingsContext } from '../../settings/settings-context.js';
import { csrfField, errorBox, html, type Html } from '../html.js';
import { COPY_STATUS, UTC_NOTE, relative, secretField, settingsPage, when } from './layout.js';

const INVITE_STATUS: Record<Invite['status'], Html> = {
  pending: html`<span class="badge ok">Pending</span>`,
  accepted: html`<span class="badge off">Accepted</span>`,
  revoked: html`<span class="badge off">Cancelled</span>`,
  expired: html`<span class="badge warn">Expired</span>`,
};

function roleOptions(roles: RoleEntity[], selected?: string): Html {
  return html`${roles.map((r) => html`<option value="${r.id}" ${r.id === selected ? html` selected` : html``}>${r.name}</option>`)}`;
}

export function membersPage(
  ctx: SettingsContext,
  o: { members: Member[]; invites: Invite[]; roles: RoleEntity[]; error?: string; notice?: string },
): string {
  return settingsPage(ctx, {
    title: 'Members',
    active: 'members',
    body: html` <h1>Members</h1>
      <p class="muted">
        People who can sign in to ${ctx.workspace.name}, and their roles. A role change applies from their next request, OAuth tokens
        included.
      </p>
      ${o.notice ? html`<p class="success" role="status">${o.notice}</p>` : html``} ${errorBox(o.error)}
      <div class="table-wrap">
        <table>
          <caption class="sr-only">
            Members of ${ctx.workspace.name}
          </caption>
          <thead>
            <tr>
              <th scope="col">Member</th>
              <th scope="col">Role</th>
              <th scope="col">Joined</th>
              <th scope="col"><span class="sr-only">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            ${o.members.map(
              (m, i) =>
                html` <tr>
                  <td class="email" data-label="Member">
                    ${m.email}${m.userId === ctx.userId ? html` <span class="muted">(you)</span>` : html``}
                  </td>
                  <td data-label="Role">
                    <form class="row-form" method="post" action="/settings/members/${m.userId}/role">
                      ${csrfField(ctx.csrf)}
                      <label class="sr-only" for="member-role-${i}">Role of ${m.email}</label>
                      <select id="member-role-${i}" name="role">
                        ${roleOptions(o.roles.some((r) => r.id === m.roleId) ? o.roles : [{ id: m.roleId, name: m.roleName } as RoleEntity, ...o.roles], m.roleId)}
                      </select>
                      <button type="submit" class="secondary small">Change role<span class="sr-only"> of ${m.email}</span></button>
                    </form>
                  </td>
                  <td data-label="Joined">${when(m.joinedAt)}</td>
                  <td data-label="">
                    <a class="link-danger" href="/settings/members/${m.userId}/remove">Remove<span class="sr-only"> ${m.email}</span></a>
                  </td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
      ${UTC_NOTE}

      <section class="panel gap-top" aria-labelledby="invite">
        <h2 id="invite">Invite someone</h2>
        <p class="muted">
          An invite link lets one person join ${ctx.workspace.name}, with an existing account or a new one. It works once, for
          ${INVITE_TTL_DAYS} days.
        </p>
        <form class="stack" method="post" action="/settings/members/invites">
          ${csrfField(ctx.csrf)}
          <label for="invite-role">Role</label>
          <select id="invite-role" name="role" required>
            <option value="" selected disabled>Choose a role</option>
            ${roleOptions(o.roles)}
          </select>
          <button type="submit">Create invite link</button>
        </form>
      </section>

      ${
        o.invites.length
          ? html` <h2 class="gap-top">Invites</h2>
              <div class="table-wrap">
                <table>
                  <caption class="sr-only">
                    Invites
                  </caption>
                  <thead>
                    <tr>
                      <th scope="col">Role</th>
                      <th scope="col">Created</th>
                      <th scope="col">Expires</th>
                      <th scope="col">Status</th>
                      <th scope="col"><span class="sr-only">Actions</span></th>
                    </tr>
                  </thead>
                  <tbody>
                    ${o.invites.map(
                      (inv) =>
                        html` <tr>
                          <td data-label="Role">${inv.roleName}</td>
                          <td data-label="Created">
                            ${when(inv.createdAt)}${inv.createdByEmail ? html`<br /><span class="muted email">by ${inv.createdByEmail}</span>` : html``}
                          </td>
                          <td data-label="Expires">
                            ${when(inv.expiresAt)}${inv.status === 'pending' ? html`<br /><span class="muted">${relative(inv.expiresAt)}</span>` : html``}
                          </td>
                          <td data-label="Status">
                            ${INVITE_STATUS[inv.status]}${inv.acceptedByEmail ? html`<br /><span class="muted email">by ${inv.acceptedByEmail}</span>` : html``}
                          </td>
                          <td data-label="">
                            ${
                              inv.status === 'pending'
                                ? html` <form method="post" action="/settings/members/invites/${inv.id}/revoke">
                                    ${csrfField(ctx.csrf)}<button type="submit" class="secondary small">Cancel invite</button>
                                  </form>`
                                : html``
                            }
                          </td>
                        </tr>`,
                    )}
                  </tbody>
                </table>
              </div>
              ${UTC_NOTE}`
          : html``
      }`,
  });
}

export function inviteCreatedPage(ctx: SettingsContext, o: { link: string; role: string; expiresAt: string }): string {
  return settingsPage(ctx, {
    title: 'Invite link',
    active: 'members',
    body: html` <h1>Invite link</h1>
      <section class="panel">
        <p class="notice" role="alert">
          <strong>Copy the link now: it is shown only once.</strong> Send it to one person; whoever opens it first joins
          ${ctx.workspace.name} as <strong>${o.role}</strong>.
        </p>
        ${secretField('invite-link', 'Invite link', o.link)} ${COPY_STATUS}
        <p class="muted">Valid until ${when(o.expiresAt)}, for one use. You can cancel it on the Members page.</p>
        <a class="button" href="/settings/members">Done</a>
      </section>`,
  });
}

export function removeMemberPage(ctx: SettingsContext, member: Member): string {
  const self = member.userId === ctx.userId;
  return settingsPage(ctx, {
    title: 'Remove member',
    active: 'members',
    body: html` <h1>${self ? `Leave ${ctx.workspace.name}?` : `Remove ${member.email}?`}</h1>
      <section class="panel">
        <p>
          ${self ? 'You' : member.email} will lose access to ${ctx.workspace.name} at once, including OAuth tokens given to applications.
          API keys they created keep working until revoked.
        </p>
        <form method="post" action="/settings/members/${member.userId}/remove">
          ${csrfField(ctx.csrf)}
          <div class="actions">
            <button type="submit" class="danger">${self ? 'Leave workspace' : 'Remove member'}</button>
            <a class="button secondary" href="/settings/members">Cancel</a>
          </div>
        </form>
      </section>`,
  });
}
