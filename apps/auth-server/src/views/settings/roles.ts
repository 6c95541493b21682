import { OTHER_OBJECTS, SETTINGS_PERMISSION_LABELS, describeUsage, type RoleInput, type RoleUsage } from '#identity/roles.js';
import { RECORD_ACTIONS, SETTINGS_PERMISSIONS, type ObjectPermissions, type RoleEntity } from '#database/entities/index.js';
import type { WorkspaceObject } from '#records/objects/index.js';
import type { SettingsContext } from '../../settings/settings-context.js';
import { csrfField, errorAbout, errorBox, fieldError, html, type Html } from '../html.js';
import { settingsPage } from './layout.js';

const ACTION_LABELS = { read: 'Read', create: 'Create', update: 'Update', delete: 'Delete' } as const;

/** The fields the roles form lists per object: name and label (restrictable built-in fields, then the workspace's custom ones). */
export type RoleFormFields = Record<string, { name: string; label: string }[]>;

/**
 * The objects as the roles page shows them, each with its label: the workspace's objects
 * (standard first, then its own; an inactive one marked), then "Other objects", the role's
 * `*` entry, which holds what an object the role does not name allows (docs/authentication.md "Roles").
 */
export interface RoleObject {
  key: string;
  label: string;
  /** The workspace's own object: a role that does not name it holds "Other objects" there. */
  isCustom: boolean;
  isActive: boolean;
}

export function roleObjects(objects: readonly WorkspaceObject[]): RoleObject[] {
  return [
    ...objects.map((o) => ({ key: o.namePlural, label: o.labelPlural, isCustom: o.isCustom, isActive: o.isActive })),
    { key: OTHER_OBJECTS, label: 'Other objects', isCustom: false, isActive: true },
  ];
}

/** What a role allows on an object: its own entry, or for the workspace's own objects its "Other objects" entry. */
const granted = (permissions: ObjectPermissions, o: RoleObject) =>
  permissions[o.key] ?? (o.isCustom ? permissions[OTHER_OBJECTS] : undefined);

function objectCell(role: RoleEntity, o: RoleObject): Html {
  const own = role.objectPermissions[o.key];
  const actions = RECORD_ACTIONS.filter((a) => granted(role.objectPermissions, o)?.[a]);
  const inherited = !own && o.isCustom && actions.length ? html`<br /><span class="muted">as other objects</span>` : html``;
  if (!actions.length) return html`<span class="muted">none</span>`;
  const restricted = Object.keys(role.fieldPermissions?.[o.key] ?? {}).length;
  const fields = restricted ? html`<br /><span class="muted">${restricted} field${restricted === 1 ? '' : 's'} restricted</span>` : html``;
  if (actions.length === RECORD_ACTIONS.length) return html`all${fields}${inherited}`;
  return html`${actions.map((a) => ACTION_LABELS[a].toLowerCase()).join(', ')}${fields}${inherited}`;
}

/**
 * Per object, its fields with Read and Update boxes (docs/settings.md): checked is the
 * default, so a role that never restricted a field shows every box checked. `fieldsShown`
 * tells the server which fields the form listed, as unchecked boxes are not sent.
 */
function fieldPermissionsTable(
  object: string,
  label: string,
  fields: { name: string; label: string }[],
  v: RoleInput,
  disabled: Html,
  checked: (on: boolean) => Html,
): Html {
  if (!fields.length) return html``;
  const rules = v.fieldPermissions?.[object] ?? {};
  const restricted = fields.filter((f) => rules[f.name]).length;
  return html` <details class="field-permissions" ${restricted ? html` open` : html``}>
    <summary>Field permissions${restricted ? html` (${restricted} restricted)` : html``}</summary>
    <table>
      <caption class="sr-only">
        Fields of ${label}
      </caption>
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">Read</th>
          <th scope="col">Update</th>
        </tr>
      </thead>
      <tbody>
        ${fields.map(
          (f) =>
            html` <tr>
              <td data-label="Field">
                ${f.label}${f.label !== f.name ? html` <span class="muted">${f.name}</span>` : html``}<input
                  type="hidden"
                  name="fieldsShown"
                  value="${object}.${f.name}"
                />
              </td>
              <td data-label="Read">
                <input
                  type="checkbox"
                  id="field-${object}-${f.name}-read"
                  name="fieldRead"
                  value="${object}.${f.name}"
                  title="Read ${f.label}"
                  ${checked(rules[f.name]?.read !== false)}${disabled}
                />
              </td>
              <td data-label="Update">
                <input
                  type="checkbox"
                  id="field-${object}-${f.name}-update"
                  name="fieldUpdate"
                  value="${object}.${f.name}"
                  title="Update ${f.label}"
                  ${checked(rules[f.name]?.update !== false)}${disabled}
                />
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
    <p class="hint">A field without Read is left out of records, exports and search; filtering, sorting or grouping on it is refused.</p>
  </details>`;
}

export function rolesPage(
  ctx: SettingsContext,
  o: { roles: { role: RoleEntity; usage: RoleUsage }[]; objects: WorkspaceObject[]; notice?: string },
): string {
  // The columns: every active object, then "Other objects" (what a role allows on objects it does not name).
  const columns = roleObjects(o.objects).filter((x) => x.isActive);
  return settingsPage(ctx, {
    title: 'Roles',
    active: 'roles',
    body: html` <h1>Roles</h1>
      <p class="muted">
        A role is what members, API keys and server apps may do. Changes apply to everyone holding the role from their next request.
      </p>
      ${o.notice ? html`<p class="success" role="status">${o.notice}</p>` : html``}
      <p><a class="button small" href="/settings/roles/new">New role</a></p>
      <div class="table-wrap">
        <table>
          <caption class="sr-only">
            Roles of ${ctx.workspace.name}
          </caption>
          <thead>
            <tr>
              <th scope="col">Role</th>
              ${columns.map((x) => html`<th scope="col">${x.label}</th>`)}
              <th scope="col">Settings</th>
              <th scope="col">Assignable to</th>
              <th scope="col">Used by</th>
              <th scope="col"><span class="sr-only">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            ${o.roles.map(
              ({ role, usage }) =>
                html` <tr>
                  <td data-label="Role">
                    <strong>${role.name}</strong
                    >${role.isEditable ? html`` : html` <span class="badge off">Built in</span>`}${role.description ? html`<br /><span class="muted">${role.description}</span>` : html``}
                  </td>
                  ${columns.map((x) => html`<td data-label="${x.label}">${objectCell(role, x)}</td>`)}
                  <td data-label="Settings">
                    ${
                      role.settingsPermissions.length
                        ? html`<ul class="perm-list">
                            ${role.settingsPermissions.map((p) => html`<li>${SETTINGS_PERMISSION_LABELS[p]}</li>`)}
                          </ul>`
                        : html`<span class="muted">none</span>`
                    }
                  </td>
                  <td data-label="Assignable to">
                    ${[role.assignableToUsers && 'users', role.assignableToApiKeys && 'API keys'].filter(Boolean).join(', ') || html`<span class="muted">nobody</span>`}
                  </td>
                  <td data-label="Used by">${describeUsage(usage)}</td>
                  <td data-label="">
                    ${
                      role.isEditable
                        ? html`<a href="/settings/roles/${role.id}">Edit<span class="sr-only"> ${role.name}</span></a
                            ><br /><a class="link-danger" href="/settings/roles/${role.id}/delete"
                              >Delete<span class="sr-only"> ${role.name}</span></a
                            >`
                        : html`<a href="/settings/roles/${role.id}">View<span class="sr-only"> ${role.name}</span></a>`
                    }
                  </td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>`,
  });
}

/** The role form (new or edit); a built-in role is shown read-only. */
export function roleFormPage(
  ctx: SettingsContext,
  o: { role?: RoleEntity; values?: RoleInput; usage?: RoleUsage; error?: string; fields?: RoleFormFields; objects: WorkspaceObject[] },
): string {
  const objects = roleObjects(o.objects);
  const v: RoleInput = o.values ??
    o.role ?? {
      name: '',
      description: '',
      // Read on every object, "Other objects" included, so an object made later is readable by a new role without an edit here.
      objectPermissions: Object.fromEntries(objects.map((x) => [x.key, { read: true, create: false, update: false, delete: false }])),
      settingsPermissions: [],
      assignableToUsers: true,
      assignableToApiKeys: true,
    };
  const readOnly = o.role !== undefined && !o.role.isEditable;
  const disabled = readOnly ? html` disabled` : html``;
  const checked = (on: boolean) => (on ? html` checked` : html``);
  const title = o.role ? (readOnly ? o.role.name : `Edit ${o.role.name}`) : 'New role';
  return settingsPage(ctx, {
    title,
    active: 'roles',
    body: html` <h1>${title}</h1>
      ${readOnly ? html`<p class="notice">${o.role!.name} is built in: it can do everything and cannot be changed or deleted.</p>` : html``}
      ${o.usage ? html`<p class="muted">Used by ${describeUsage(o.usage)}. Changes apply to all of them at their next request.</p>` : html``}
      <section class="panel">
        ${errorBox(o.error)}
        <form class="stack" method="post" action="${o.role ? `/settings/roles/${o.role.id}` : '/settings/roles'}">
          ${csrfField(ctx.csrf)}
          <label for="role-name">Name</label>
          <input
            id="role-name"
            name="name"
            required
            maxlength="50"
            value="${v.name}"
            ${disabled}${fieldError(errorAbout(o.error, 'name'))}
          />
          <label for="role-description">Description</label>
          <input
            id="role-description"
            name="description"
            maxlength="200"
            value="${v.description}"
            ${disabled}${fieldError(errorAbout(o.error, 'description'))}
          />
          ${objects.map((x) => {
            // No object's name holds a hyphen: `other-objects` is no object's.
            const id = (action: string) => `perm-${x.key === OTHER_OBJECTS ? 'other-objects' : x.key}-${action}`;
            return html` <fieldset>
              <legend>${x.label}${x.isActive ? html`` : html` <span class="muted">(inactive)</span>`}</legend>
              <input type="hidden" name="objectsShown" value="${x.key}" />
              ${
                x.key === OTHER_OBJECTS
                  ? html`<p class="hint">What this role may do with every object it does not list here, such as one made later.</p>`
                  : html``
              }
              <div class="checks">
                ${RECORD_ACTIONS.map(
                  (action) =>
                    html` <span class="check"
                      ><input
                        type="checkbox"
                        id="${id(action)}"
                        name="permissions"
                        value="${x.key}.${action}"
                        ${checked(granted(v.objectPermissions, x)?.[action] === true)}${disabled}
                      /><label for="${id(action)}">${ACTION_LABELS[action]}</label></span
                    >`,
                )}
              </div>
              ${readOnly || x.key === OTHER_OBJECTS ? html`` : fieldPermissionsTable(x.key, x.label, o.fields?.[x.key] ?? [], v, disabled, checked)}
            </fieldset>`;
          })}
          <fieldset>
            <legend>Settings permissions</legend>
            <div class="checks">
              ${SETTINGS_PERMISSIONS.map(
                (p) =>
                  html` <span class="check"
                    ><input
                      type="checkbox"
                      id="settings-${p}"
                      name="settings"
                      value="${p}"
                      ${checked(v.settingsPermissions.includes(p))}${disabled}
                    /><label for="settings-${p}">${SETTINGS_PERMISSION_LABELS[p]}</label></span
                  >`,
              )}
            </div>
            <p class="hint">Settings permissions act only for members signed in to these pages, never for API keys or apps.</p>
          </fieldset>
          <fieldset>
            <legend>Who can hold it</legend>
            <div class="checks">
              <span class="check"
                ><input
                  type="checkbox"
                  id="assignable-users"
                  name="assignableToUsers"
                  value="on"
                  ${checked(v.assignableToUsers)}${disabled}
                /><label for="assignable-users">Assignable to users</label></span
              >
              <span class="check"
                ><input
                  type="checkbox"
                  id="assignable-keys"
                  name="assignableToApiKeys"
                  value="on"
                  ${checked(v.assignableToApiKeys)}${disabled}
                /><label for="assignable-keys">Assignable to API keys</label></span
              >
            </div>
            <p class="hint">"API keys" covers server apps too.</p>
          </fieldset>
          ${
            readOnly
              ? html`<p><a class="button secondary" href="/settings/roles">Back to roles</a></p>`
              : html`<div class="actions">
                  <button type="submit">${o.role ? 'Save role' : 'Create role'}</button
                  ><a class="button secondary" href="/settings/roles">Cancel</a>
                </div>`
          }
        </form>
      </section>`,
  });
}

export function deleteRolePage(ctx: SettingsContext, o: { role: RoleEntity; usage: RoleUsage }): string {
  const inUse = o.usage.members + o.usage.apiKeys + o.usage.serverApps + o.usage.invites > 0;
  return settingsPage(ctx, {
    title: 'Delete role',
    active: 'roles',
    body: html` <h1>Delete "${o.role.name}"?</h1>
      <section class="panel">
        ${
          inUse
            ? html`<p class="error" role="alert">
                  This role is in use (${describeUsage(o.usage)}) and cannot be deleted. Give them another role first.
                </p>
                <a class="button secondary" href="/settings/roles">Back to roles</a>`
            : html`<p>Nobody holds this role. Deleting it cannot be undone.</p>
                <form method="post" action="/settings/roles/${o.role.id}/delete">
                  ${csrfField(ctx.csrf)}
                  <div class="actions">
                    <button type="submit" class="danger">Delete role</button><a class="button secondary" href="/settings/roles">Cancel</a>
                  </div>
                </form>`
        }
      </section>`,
  });
}
