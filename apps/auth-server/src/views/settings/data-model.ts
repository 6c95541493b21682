import { FIELD_TYPES, fieldType } from '#records/field-types/index.js';
import {
  CUSTOM_FIELD_OBJECTS,
  MAX_OPTIONS,
  OPTION_VALUE_RULE,
  objectNamed,
  type CustomField,
  type FieldDeclaration,
} from '#records/objects/index.js';
import type { EditFieldValues, NewFieldValues, OptionRow } from '../../settings/data-model/data-model.form.js';
import type { SettingsContext } from '../../settings/settings-context.js';
import { csrfField, errorAbout, errorAt, errorBox, fieldError, html, type Html } from '../html.js';
import { settingsPage } from './layout.js';

/** Empty rows under a select's options, to add that many at once. */
const NEW_OPTION_ROWS = 3;

const title = (plural: string) => objectNamed(plural).pluralType;
const humanize = (name: string) => name.replace(/([A-Z])/g, ' $1').replace(/^./, (c) => c.toUpperCase());
const sentence = (name: string) => humanize(name).replace(/ ([A-Z])/g, (_, c: string) => ` ${c.toLowerCase()}`);
const checked = (on: boolean) => (on ? html` checked` : html``);
/** After a refusal the page comes back with the focus on the field at fault (the first), not at the top (WCAG 2.2 SC 3.3.1). */
const focusIf = (on: boolean) => (on ? html` autofocus` : html``);
/** The one of `fields` the error names first (its messages open with the field: `options, line 3: label …` is about options). */
function faulty(error: string | undefined, fields: string[]): string | undefined {
  return fields
    .filter((f) => errorAt(error, f) >= 0)
    .sort((a, b) => errorAt(error, a) - errorAt(error, b))
    .at(0);
}
/** Option values are capitals: the page's script upper-cases them as they are typed (`lines`: the VALUE of each VALUE|Label line). */
const optionValues = (kind: 'lines' | 'value') => html` data-option-values="${kind}" autocapitalize="characters"`;

/** A built-in field as the table shows it: its label, type and, for a list of values, the values. */
function builtIn(f: FieldDeclaration): { label: string; type: Html; options: Html } {
  switch (f.kind) {
    case 'text':
      return { label: sentence(f.name), type: html`<code>TEXT</code>`, options: html`` };
    case 'timestamp':
      return { label: sentence(f.name), type: html`<code>DATE_TIME</code>`, options: html`` };
    case 'enum':
      return { label: sentence(f.name), type: html`<code>SELECT</code>`, options: html`${f.values.join(', ')}` };
    case 'composite':
      return { label: sentence(f.name), type: html`<code>${f.type}</code>`, options: html`` };
    case 'relation':
      return { label: sentence(f.relation), type: html`<code>RELATION</code> <span class="muted">to ${f.target}</span>`, options: html`` };
  }
}

function status(field: CustomField): Html {
  const state = field.isActive ? html`<span class="badge ok">Active</span>` : html`<span class="badge warn">Inactive</span>`;
  return html`${state}${field.isNullable ? html`` : html`<br /><span class="muted">required</span>`}`;
}

function optionsText(field: CustomField): Html {
  return field.options?.length ? html`${field.options.map((o) => `${o.label} (${o.value})`).join(', ')}` : html``;
}

function fieldsTable(object: string, fields: CustomField[]): Html {
  const declared = objectNamed(object).fields;
  return html` <div class="table-wrap">
    <table class="fields">
      <caption class="sr-only">
        Fields of ${title(object)}
      </caption>
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">Type</th>
          <th scope="col">Options</th>
          <th scope="col">Status</th>
          <th scope="col"><span class="sr-only">Actions</span></th>
        </tr>
      </thead>
      <tbody>
        ${declared.map((f) => {
          const d = builtIn(f);
          return html` <tr>
            <td data-label="Field"><strong>${d.label}</strong><br /><code>${f.name}</code></td>
            <td data-label="Type">${d.type}</td>
            <td data-label="Options">${d.options}</td>
            <td data-label="Status"><span class="badge off">Built in</span></td>
            <td data-label=""><span class="muted">Not editable</span></td>
          </tr>`;
        })}
        ${fields.map(
          (f) =>
            html` <tr id="field-${f.id}">
              <td data-label="Field">
                <strong>${f.label}</strong><br /><code>${f.name}</code
                >${f.description ? html`<br /><span class="muted">${f.description}</span>` : html``}
              </td>
              <td data-label="Type"><code>${f.type}</code></td>
              <td data-label="Options">${optionsText(f)}</td>
              <td data-label="Status">${status(f)}</td>
              <td data-label="">
                <a href="/settings/data-model/${f.id}">Edit<span class="sr-only"> ${object}.${f.name}</span></a
                >${
                  f.isActive
                    ? html``
                    : html`<br /><a class="link-danger" href="/settings/data-model/${f.id}/delete"
                          >Delete<span class="sr-only"> ${object}.${f.name}</span></a
                        >`
                }
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

function addFieldForm(ctx: SettingsContext, object: string, error: string | undefined, values: NewFieldValues | undefined): Html {
  const v: NewFieldValues = values ?? { object, name: '', label: '', description: '', type: 'TEXT', options: '', isNullable: true };
  const id = (part: string) => `new-${object}-${part}`;
  const focus = faulty(error, ['name', 'label', 'description', 'type', 'options']);
  // Folded until opened (a native control: Enter or Space on the summary), open again after a refusal.
  return html` <details class="panel gap-top add-field" ${error ? html` open` : html``}>
    <summary id="${id('title')}">Add a field to ${title(object)}</summary>
    <form class="stack" method="post" action="/settings/data-model" aria-labelledby="${id('title')}">
      ${errorBox(error)} ${csrfField(ctx.csrf)}
      <input type="hidden" name="object" value="${object}" />
      <label for="${id('name')}">Name</label>
      <input
        id="${id('name')}"
        name="name"
        required
        maxlength="63"
        autocomplete="off"
        spellcheck="false"
        value="${v.name}"
        ${fieldError(errorAbout(error, 'name'), id('name-hint'))}${focusIf(focus === 'name')}
      />
      <p class="hint" id="${id('name-hint')}">
        The API name, in camelCase: a lower-case letter, then letters and digits, as in <code>annualRevenue</code>. It never changes.
      </p>
      <label for="${id('label')}">Label</label>
      <input
        id="${id('label')}"
        name="label"
        maxlength="100"
        value="${v.label}"
        ${fieldError(errorAbout(error, 'label'), id('label-hint'))}${focusIf(focus === 'label')}
      />
      <p class="hint" id="${id('label-hint')}">What people read, as in "Annual revenue"; the name when left empty.</p>
      <label for="${id('description')}">Description</label>
      <input
        id="${id('description')}"
        name="description"
        maxlength="500"
        value="${v.description}"
        ${fieldError(errorAbout(error, 'description'))}${focusIf(focus === 'description')}
      />
      <label for="${id('type')}">Type</label>
      <select id="${id('type')}" name="type" ${fieldError(errorAbout(error, 'type'))}${focusIf(focus === 'type')}>
        ${FIELD_TYPES.map((t) => html`<option value="${t.name}" ${t.name === v.type ? html` selected` : html``}>${t.name} — ${t.pageWord}</option>`)}
      </select>
      <label for="${id('options')}">Options</label>
      <textarea
        id="${id('options')}"
        name="options"
        rows="4"
        spellcheck="false"
        ${optionValues('lines')}
        ${fieldError(errorAbout(error, 'options'), id('options-hint'))}${focusIf(focus === 'options')}
      >
${v.options}</textarea>
      <p class="hint" id="${id('options-hint')}">
        For SELECT and MULTI_SELECT only, and then needed: one option per line as <code>VALUE|Label</code>, as in <code>GOLD|Gold</code>.
        The value is capitals, digits and <code>_</code>, and is what the APIs read and write; the label may be left out. At most
        ${MAX_OPTIONS}.
      </p>
      <label class="check"
        ><input type="checkbox" name="isNullable" value="on" ${checked(v.isNullable)} ${fieldError(errorAbout(error, 'isNullable'))} />
        Records may leave it empty</label
      >
      <button type="submit">Add field<span class="sr-only"> to ${title(object)}</span></button>
    </form>
  </details>`;
}

export function dataModelPage(
  ctx: SettingsContext,
  o: { fields: CustomField[]; notice?: string; error?: string; values?: NewFieldValues },
): string {
  const errorObject = o.values && (CUSTOM_FIELD_OBJECTS as readonly string[]).includes(o.values.object) ? o.values.object : undefined;
  return settingsPage(ctx, {
    title: 'Data model',
    active: 'data-model',
    body: html` <h1>Data model</h1>
      <p class="muted">
        The fields of each object in ${ctx.workspace.name}. Built-in fields are part of the service. Custom fields are this workspace's own:
        records carry them in REST, GraphQL and MCP as soon as they are added (the metadata API, <code>/rest/metadata/fields</code>, changes
        the same fields). A custom field's name, type and object never change. Deactivating a field hides it from the APIs and keeps its
        values; only an inactive field can be deleted, and deleting it deletes its values.
      </p>
      ${o.notice ? html`<p class="success" role="status">${o.notice}</p>` : html``} ${errorObject ? html`` : errorBox(o.error)}
      <p class="actions">${CUSTOM_FIELD_OBJECTS.map((object) => html`<a href="#${object}">${title(object)}</a>`)}</p>
      ${CUSTOM_FIELD_OBJECTS.map(
        (object) =>
          html` <section class="gap-top" id="${object}" aria-labelledby="${object}-title">
            <h2 id="${object}-title">${title(object)}</h2>
            ${fieldsTable(
              object,
              o.fields.filter((f) => f.object === object),
            )}
            ${addFieldForm(ctx, object, errorObject === object ? o.error : undefined, errorObject === object ? o.values : undefined)}
          </section>`,
      )}`,
  });
}

function optionRows(field: CustomField, rows: OptionRow[] | undefined, error: string | undefined): Html {
  // After a refusal about the options, the focus goes to the first new value the rule refuses (or the first new row).
  const refusedRow = errorAbout(error, 'options')
    ? ((rows ?? []).find((r) => !r.existing && r.value && !OPTION_VALUE_RULE.test(r.value)) ?? (rows ?? []).find((r) => !r.existing))
    : undefined;
  const current: OptionRow[] = rows ?? [
    ...(field.options ?? []).map((opt) => ({ value: opt.value, label: opt.label, color: opt.color, existing: true, remove: false })),
    ...Array.from({ length: NEW_OPTION_ROWS }, () => ({ value: '', label: '', color: null, existing: false, remove: false })),
  ];
  let added = 0;
  return html` <fieldset>
    <legend>Options</legend>
    <p class="hint" id="options-hint">
      Change a label, tick Remove to drop an option (records holding it lose that value when you save), or fill an empty row to add one: the
      value is capitals, digits and <code>_</code> (as in <code>GOLD</code>) and never changes. Save, and three more empty rows appear.
    </p>
    ${current.map((row, i) => {
      if (row.existing)
        return html` <div class="option-row">
          <input type="hidden" name="optionValue" value="${row.value}" />
          <input type="hidden" name="optionColor" value="${row.color ?? ''}" />
          <div class="option-value"><span class="muted">Value</span><br /><code>${row.value}</code></div>
          <div>
            <label for="opt-label-${i}">Label<span class="sr-only"> of ${row.value}</span></label>
            <input
              id="opt-label-${i}"
              name="optionLabel"
              maxlength="100"
              value="${row.label}"
              ${fieldError(errorAbout(error, 'options'))}
            />
          </div>
          <label class="check option-remove"
            ><input type="checkbox" name="optionRemove" value="${row.value}" ${checked(row.remove)} /> Remove<span class="sr-only">
              ${row.value}</span
            ></label
          >
        </div>`;
      added++;
      return html` <div class="option-row">
        <div>
          <label for="opt-new-value-${added}">Value<span class="sr-only"> of new option ${added}</span></label>
          <input
            id="opt-new-value-${added}"
            name="newValue"
            maxlength="63"
            autocomplete="off"
            spellcheck="false"
            value="${row.value}"
            ${optionValues('value')}
            ${fieldError(errorAbout(error, 'options'), 'options-hint')}${focusIf(row === refusedRow)}
          />
        </div>
        <div>
          <label for="opt-new-label-${added}">Label<span class="sr-only"> of new option ${added}</span></label>
          <input id="opt-new-label-${added}" name="newLabel" maxlength="100" value="${row.label}" />
        </div>
      </div>`;
    })}
  </fieldset>`;
}

/** A custom field's page: the edit form, and the toggle between active and inactive (then delete). */
export function editFieldPage(
  ctx: SettingsContext,
  o: { field: CustomField; values?: EditFieldValues; error?: string; notice?: string },
): string {
  const f = o.field;
  const v: EditFieldValues = o.values ?? { label: f.label, description: f.description ?? '', isNullable: f.isNullable, options: [] };
  const focus = faulty(o.error, ['label', 'description']);
  return settingsPage(ctx, {
    title: `Field ${f.object}.${f.name}`,
    active: 'data-model',
    body: html` <h1>Field <code>${f.object}.${f.name}</code></h1>
      ${o.notice ? html`<p class="success" role="status">${o.notice}</p>` : html``}
      <p class="muted">
        ${title(f.object)} · <code>${f.type}</code> ·
        ${f.isActive ? html`<span class="badge ok">Active</span>` : html`<span class="badge warn">Inactive</span>`} <br />The name, type and
        object of a field never change: for another one, add a new field.
      </p>
      <section class="panel" aria-labelledby="edit-field">
        <h2 id="edit-field">Settings</h2>
        ${errorBox(o.error)}
        <form class="stack" method="post" action="/settings/data-model/${f.id}">
          ${csrfField(ctx.csrf)}
          <label for="field-label">Label</label>
          <input
            id="field-label"
            name="label"
            required
            maxlength="100"
            value="${v.label}"
            ${fieldError(errorAbout(o.error, 'label'))}${focusIf(focus === 'label')}
          />
          <label for="field-description">Description</label>
          <input
            id="field-description"
            name="description"
            maxlength="500"
            value="${v.description}"
            ${fieldError(errorAbout(o.error, 'description'))}${focusIf(focus === 'description')}
          />
          ${fieldType(f.type).options ? optionRows(f, o.values?.options, o.error) : html``}
          <label class="check"
            ><input
              type="checkbox"
              name="isNullable"
              value="on"
              ${checked(v.isNullable)}
              ${fieldError(errorAbout(o.error, 'isNullable'))}
            />
            Records may leave it empty</label
          >
          <div class="actions">
            <button type="submit">Save field</button
            ><a class="button secondary" href="/settings/data-model#${f.object}">Back to the data model</a>
          </div>
        </form>
      </section>
      <section class="panel" aria-labelledby="field-state">
        <h2 id="field-state">${f.isActive ? 'Deactivate' : 'Inactive'}</h2>
        ${
          f.isActive
            ? html`<p>
                  Deactivating hides <code>${f.name}</code> from REST, GraphQL and MCP; its values are kept and come back if you reactivate
                  it. A field must be inactive before it can be deleted.
                </p>
                <form method="post" action="/settings/data-model/${f.id}/active">
                  ${csrfField(ctx.csrf)}<input type="hidden" name="active" value="false" />
                  <button type="submit" class="secondary">Deactivate field</button>
                </form>`
            : html`<p>
                  <code>${f.name}</code> is hidden from REST, GraphQL and MCP; its values are kept. Reactivate it to bring it back, or
                  delete it with its values.
                </p>
                <form method="post" action="/settings/data-model/${f.id}/active">
                  ${csrfField(ctx.csrf)}<input type="hidden" name="active" value="true" />
                  <div class="actions">
                    <button type="submit" class="secondary">Reactivate field</button
                    ><a class="button danger" href="/settings/data-model/${f.id}/delete">Delete field…</a>
                  </div>
                </form>`
        }
      </section>`,
  });
}

/** The confirmation before deleting: the field's name typed into a required field (no script needed). */
export function confirmDeleteFieldPage(ctx: SettingsContext, o: { field: CustomField; values?: number; error?: string }): string {
  const f = o.field;
  const records = objectNamed(f.object);
  const held =
    o.values === undefined
      ? ''
      : o.values === 0
        ? `No ${records.singular} holds a value of it.`
        : `${o.values} ${o.values === 1 ? `${records.singular} holds` : `${f.object} hold`} a value of it.`;
  return settingsPage(ctx, {
    title: 'Delete field',
    active: 'data-model',
    body: html` <h1>Delete the field <code>${f.object}.${f.name}</code>?</h1>
      <section class="panel">
        ${
          f.isActive
            ? html`<p class="error" role="alert">${f.name} is active. Deactivate it first on its page, then delete it.</p>
                <a class="button secondary" href="/settings/data-model/${f.id}">Back to the field</a>`
            : html`<p>
                  Deleting <strong>${f.label}</strong> deletes its values in every ${records.singular}. ${held} This cannot be undone.
                </p>
                ${errorBox(o.error)}
                <form class="stack" method="post" action="/settings/data-model/${f.id}/delete">
                  ${csrfField(ctx.csrf)}
                  <label for="confirm-name">Type <code>${f.name}</code> to confirm</label>
                  <input
                    id="confirm-name"
                    name="confirm"
                    required
                    autocomplete="off"
                    spellcheck="false"
                    ${fieldError(errorAbout(o.error, 'confirm'))}
                  />
                  <div class="actions">
                    <button type="submit" class="danger">Delete field</button
                    ><a class="button secondary" href="/settings/data-model/${f.id}">Cancel</a>
                  </div>
                </form>`
        }
      </section>`,
  });
}
