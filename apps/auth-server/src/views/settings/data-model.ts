import { FIELD_TYPES, fieldType, relationSettings } from '#records/field-types/index.js';
import {
  MAX_CUSTOM_OBJECTS,
  MAX_OPTIONS,
  OPTION_VALUE_RULE,
  objectNamed,
  relationSummary,
  type CustomField,
  type StandardField,
  type WorkspaceObject,
} from '#records/objects/index.js';
import type {
  EditFieldValues,
  EditObjectValues,
  NewFieldValues,
  NewObjectValues,
  OptionRow,
} from '../../settings/data-model/data-model.form.js';
import type { SettingsContext } from '../../settings/settings-context.js';
import { csrfField, errorAbout, errorAt, errorBox, fieldError, html, type Html } from '../html.js';
import { settingsPage } from './layout.js';

/** Empty rows under a select's options, to add that many at once. */
const NEW_OPTION_ROWS = 3;

/** An object's heading: its plural label (Companies, Tickets). */
const title = (object: WorkspaceObject) => object.labelPlural;
/**
 * The id of an object's section: a standard object's plural name (links to `#companies` keep
 * working); a workspace's own object's with a prefix, so no name it may take is an id of the layout.
 */
export const sectionId = (object: WorkspaceObject) => (object.isCustom ? `object-${object.namePlural}` : object.namePlural);
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

/** A built-in field as the table shows it: its label (a link's: its relation's), registry type (a link's: with its target) and values. */
function builtIn(f: StandardField): { label: string; type: Html; options: Html } {
  const link = relationSettings(f);
  return {
    label: sentence(link?.relationName ?? f.name),
    type: link ? html`<code>${f.type}</code> <span class="muted">to ${link.targetObject}</span>` : html`<code>${f.type}</code>`,
    options: html`${(f.options ?? []).map((o) => o.value).join(', ')}`,
  };
}

function status(field: CustomField, object: WorkspaceObject): Html {
  const state = field.isActive ? html`<span class="badge ok">Active</span>` : html`<span class="badge warn">Inactive</span>`;
  const names =
    object.isCustom && object.labelIdentifierField === field.name ? html`<br /><span class="muted">names records</span>` : html``;
  return html`${state}${field.isNullable ? html`` : html`<br /><span class="muted">required</span>`}${names}`;
}

function optionsText(field: CustomField): Html {
  const relation = relationSummary(field);
  if (relation) {
    const ends = relation.type === 'MANY_TO_ONE' ? `one of ${relation.targetObject}` : `${relation.targetObject} linking here`;
    return html`${ends} (<code>${relation.inverseName}</code> on the other side; on delete ${relation.onDelete})`;
  }
  return field.options?.length ? html`${field.options.map((o) => `${o.label} (${o.value})`).join(', ')}` : html``;
}

function fieldsTable(o: WorkspaceObject, fields: CustomField[]): Html {
  const object = o.namePlural;
  // A standard object's own fields are in its declaration; a custom object's are all custom fields.
  const declared = o.isCustom ? [] : objectNamed(object).fields;
  return html` <div class="table-wrap">
    <table class="fields">
      <caption class="sr-only">
        Fields of ${title(o)}
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
              <td data-label="Status">${status(f, o)}</td>
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

function addFieldForm(ctx: SettingsContext, o: WorkspaceObject, error: string | undefined, values: NewFieldValues | undefined): Html {
  const object = o.namePlural;
  const v: NewFieldValues = values ?? { object, name: '', label: '', description: '', type: 'TEXT', options: '', isNullable: true };
  const id = (part: string) => `new-${object}-${part}`;
  const focus = faulty(error, ['name', 'label', 'description', 'type', 'options']);
  // Folded until opened (a native control: Enter or Space on the summary), open again after a refusal.
  return html` <details class="panel gap-top add-field" ${error ? html` open` : html``}>
    <summary id="${id('title')}">Add a field to ${title(o)}</summary>
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
      <button type="submit">Add field<span class="sr-only"> to ${title(o)}</span></button>
    </form>
  </details>`;
}

/** A custom object's names and description above its fields, with the link to its settings. */
function objectSummary(o: WorkspaceObject): Html {
  return html`<p class="muted">
    <code>${o.nameSingular}</code> / <code>${o.namePlural}</code> · your own object${o.description ? html` · ${o.description}` : html``} ·
    named by <code>${o.labelIdentifierField}</code> <br /><a href="/settings/data-model/objects/${o.id}"
      >Edit object<span class="sr-only"> ${o.namePlural}</span></a
    >
  </p>`;
}

function newObjectForm(ctx: SettingsContext, count: number, error: string | undefined, values: NewObjectValues | undefined): Html {
  const v: NewObjectValues = values ?? { nameSingular: '', namePlural: '', labelSingular: '', labelPlural: '', description: '' };
  const input = (name: keyof NewObjectValues, label: string, hint: Html, o: { required?: boolean; max: number; name?: boolean }) =>
    html`<label for="new-object-${name}">${label}</label>
      <input
        id="new-object-${name}"
        name="${name}"
        ${o.required ? html` required` : html``}
        maxlength="${o.max}"
        ${o.name ? html` autocomplete="off" spellcheck="false"` : html``}
        value="${v[name]}"
        ${fieldError(errorAbout(error, name), `new-object-${name}-hint`)}
      />
      <p class="hint" id="new-object-${name}-hint">${hint}</p>`;
  return html` <section class="gap-top" id="new-object" aria-labelledby="new-object-title">
    <details class="panel" ${error ? html` open` : html``}>
      <summary id="new-object-title">New object</summary>
      <form class="stack" method="post" action="/settings/data-model/objects" aria-labelledby="new-object-title">
        ${errorBox(error)} ${csrfField(ctx.csrf)}
        <p class="hint">
          An object of your own beside companies, people and opportunities ("Tickets", "Projects"): its records have every REST call,
          search, imports, exports and webhooks, for this workspace only. It starts with a TEXT field <code>name</code> that names its
          records. ${count} of ${MAX_CUSTOM_OBJECTS} objects used.
        </p>
        ${input('nameSingular', 'Name (one record)', html`camelCase, as in <code>ticket</code>. It never changes.`, { required: true, max: 63, name: true })}
        ${input('namePlural', 'Name (several records)', html`camelCase, as in <code>tickets</code>: the path <code>/rest/tickets</code>. It never changes.`, { required: true, max: 63, name: true })}
        ${input('labelSingular', 'Label (one record)', html`As in "Ticket"; from the name when left empty.`, { max: 100 })}
        ${input('labelPlural', 'Label (several records)', html`As in "Support tickets"; from the name when left empty.`, { max: 100 })}
        ${input('description', 'Description', html`What the object is for (optional).`, { max: 500 })}
        <button type="submit">Create object</button>
      </form>
    </details>
  </section>`;
}

/** Deactivated objects: hidden from every API with their records kept; reactivate or delete them from their page. */
function inactiveObjects(objects: WorkspaceObject[]): Html {
  if (!objects.length) return html``;
  return html` <section class="gap-top" id="inactive-objects" aria-labelledby="inactive-objects-title">
    <h2 id="inactive-objects-title">Inactive objects</h2>
    <p class="muted">Hidden from every API; their records and fields are kept until you reactivate or delete them.</p>
    <div class="table-wrap">
      <table>
        <caption class="sr-only">
          Inactive objects
        </caption>
        <thead>
          <tr>
            <th scope="col">Object</th>
            <th scope="col">Names</th>
            <th scope="col"><span class="sr-only">Actions</span></th>
          </tr>
        </thead>
        <tbody>
          ${objects.map(
            (o) =>
              html` <tr id="${sectionId(o)}">
                <td data-label="Object"><strong>${o.labelPlural}</strong> <span class="badge warn">Inactive</span></td>
                <td data-label="Names"><code>${o.nameSingular}</code> / <code>${o.namePlural}</code></td>
                <td data-label="">
                  <a href="/settings/data-model/objects/${o.id}">Reactivate…<span class="sr-only"> ${o.namePlural}</span></a
                  ><br /><a class="link-danger" href="/settings/data-model/objects/${o.id}/delete"
                    >Delete<span class="sr-only"> ${o.namePlural}</span></a
                  >
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
  </section>`;
}

export function dataModelPage(
  ctx: SettingsContext,
  o: {
    objects: WorkspaceObject[];
    fields: CustomField[];
    notice?: string;
    error?: string;
    values?: NewFieldValues;
    objectError?: string;
    objectValues?: NewObjectValues;
  },
): string {
  const active = o.objects.filter((x) => x.isActive);
  const errorObject = o.values && active.some((x) => x.namePlural === o.values!.object) ? o.values.object : undefined;
  return settingsPage(ctx, {
    title: 'Data model',
    active: 'data-model',
    body: html` <h1>Data model</h1>
      <p class="muted">
        The objects of ${ctx.workspace.name} and their fields. Companies, people and opportunities and their built-in fields are part of the
        service; the objects and custom fields you add are this workspace's own: records carry them in the APIs as soon as they are added
        (the metadata API, <code>/rest/metadata/objects</code> and <code>/rest/metadata/fields</code>, changes the same ones). Names and
        types never change. Deactivating hides an object or field from the APIs and keeps its data; only an inactive one can be deleted, and
        deleting it deletes its data.
      </p>
      ${o.notice ? html`<p class="success" role="status">${o.notice}</p>` : html``}
      ${errorObject || o.objectError ? html`` : errorBox(o.error)}
      <p class="actions">${active.map((x) => html`<a href="#${sectionId(x)}">${title(x)}</a>`)}<a href="#new-object">New object</a></p>
      ${active.map(
        (x) =>
          html` <section class="gap-top" id="${sectionId(x)}" aria-labelledby="${sectionId(x)}-title">
            <h2 id="${sectionId(x)}-title">${title(x)}</h2>
            ${x.isCustom ? objectSummary(x) : html``}
            ${fieldsTable(
              x,
              o.fields.filter((f) => f.object === x.namePlural),
            )}
            ${addFieldForm(ctx, x, errorObject === x.namePlural ? o.error : undefined, errorObject === x.namePlural ? o.values : undefined)}
          </section>`,
      )}
      ${newObjectForm(ctx, o.objects.filter((x) => x.isCustom).length, o.objectError, o.objectValues)}
      ${inactiveObjects(o.objects.filter((x) => !x.isActive))}`,
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
  o: { object: WorkspaceObject; field: CustomField; values?: EditFieldValues; error?: string; notice?: string },
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
        ${title(o.object)} · <code>${f.type}</code> ·
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
            ><a class="button secondary" href="/settings/data-model#${sectionId(o.object)}">Back to the data model</a>
          </div>
        </form>
      </section>
      ${activeToggle(ctx, {
        kind: 'field',
        name: f.name,
        path: `/settings/data-model/${f.id}`,
        isActive: f.isActive,
        hiddenFrom: 'REST, GraphQL and MCP',
        kept: 'values',
      })}`,
  });
}

/** The confirmation before deleting: the field's name typed into a required field (no script needed). */
export function confirmDeleteFieldPage(
  ctx: SettingsContext,
  o: { object: WorkspaceObject; field: CustomField; values?: number; error?: string },
): string {
  const f = o.field;
  const singular = o.object.nameSingular;
  const held =
    o.values === undefined
      ? ''
      : o.values === 0
        ? `No ${singular} holds a value of it.`
        : `${o.values} ${o.values === 1 ? `${singular} holds` : `${f.object} hold`} a value of it.`;
  return settingsPage(ctx, {
    title: 'Delete field',
    active: 'data-model',
    body: html` <h1>Delete the field <code>${f.object}.${f.name}</code>?</h1>
      ${confirmDeleteForm(ctx, {
        kind: 'field',
        name: f.name,
        path: `/settings/data-model/${f.id}`,
        isActive: f.isActive,
        what: html`Deleting <strong>${f.label}</strong> deletes its values in every ${singular}. ${held} This cannot be undone.`,
        error: o.error,
      })}`,
  });
}

/** A custom object's page: its labels, description and label identifier, and the toggle between active and inactive (then delete). */
export function editObjectPage(
  ctx: SettingsContext,
  o: { object: WorkspaceObject; identifiers: string[]; values?: EditObjectValues; error?: string; notice?: string },
): string {
  const x = o.object;
  const v: EditObjectValues = o.values ?? {
    labelSingular: x.labelSingular,
    labelPlural: x.labelPlural,
    description: x.description ?? '',
    labelIdentifierField: x.labelIdentifierField,
  };
  const back = x.isActive ? `/settings/data-model#${sectionId(x)}` : '/settings/data-model#inactive-objects';
  const text = (name: 'labelSingular' | 'labelPlural' | 'description', label: string, max: number, required: boolean) =>
    html`<label for="object-${name}">${label}</label>
      <input
        id="object-${name}"
        name="${name}"
        ${required ? html` required` : html``}
        maxlength="${max}"
        value="${v[name]}"
        ${fieldError(errorAbout(o.error, name))}
      />`;
  return settingsPage(ctx, {
    title: `Object ${x.namePlural}`,
    active: 'data-model',
    body: html` <h1>Object <code>${x.namePlural}</code></h1>
      ${o.notice ? html`<p class="success" role="status">${o.notice}</p>` : html``}
      <p class="muted">
        <code>${x.nameSingular}</code> / <code>${x.namePlural}</code> ·
        ${x.isActive ? html`<span class="badge ok">Active</span>` : html`<span class="badge warn">Inactive</span>`} <br />An object's names
        never change: for others, create another object.
      </p>
      <section class="panel" aria-labelledby="edit-object">
        <h2 id="edit-object">Settings</h2>
        ${errorBox(o.error)}
        <form class="stack" method="post" action="/settings/data-model/objects/${x.id}">
          ${csrfField(ctx.csrf)} ${text('labelSingular', 'Label (one record)', 100, true)}
          ${text('labelPlural', 'Label (several records)', 100, true)} ${text('description', 'Description', 500, false)}
          <label for="object-labelIdentifierField">Names its records</label>
          <select
            id="object-labelIdentifierField"
            name="labelIdentifierField"
            ${fieldError(errorAbout(o.error, 'labelIdentifierField'), 'object-labelIdentifierField-hint')}
          >
            ${[...new Set([v.labelIdentifierField, ...o.identifiers])].map(
              (name) => html`<option value="${name}" ${name === v.labelIdentifierField ? html` selected` : html``}>${name}</option>`,
            )}
          </select>
          <p class="hint" id="object-labelIdentifierField-hint">
            The TEXT field whose value names a record in search results and pages; it stays active while it names them.
          </p>
          <div class="actions">
            <button type="submit">Save object</button><a class="button secondary" href="${back}">Back to the data model</a>
          </div>
        </form>
      </section>
      ${activeToggle(ctx, {
        kind: 'object',
        name: x.namePlural,
        path: `/settings/data-model/objects/${x.id}`,
        isActive: x.isActive,
        hiddenFrom: 'REST, GraphQL, MCP, search, imports, exports and webhooks',
        kept: 'records and fields',
      })}`,
  });
}

/** The confirmation before deleting an object: its plural name typed into a required field (no script needed). */
export function confirmDeleteObjectPage(ctx: SettingsContext, o: { object: WorkspaceObject; records?: number; error?: string }): string {
  const x = o.object;
  const held =
    o.records === undefined
      ? ''
      : o.records === 0
        ? `It has no ${x.nameSingular}.`
        : `${o.records} ${o.records === 1 ? `${x.nameSingular} goes` : `${x.namePlural} go`} with it.`;
  return settingsPage(ctx, {
    title: 'Delete object',
    active: 'data-model',
    body: html` <h1>Delete the object <code>${x.namePlural}</code>?</h1>
      ${confirmDeleteForm(ctx, {
        kind: 'object',
        name: x.namePlural,
        path: `/settings/data-model/objects/${x.id}`,
        isActive: x.isActive,
        what: html`Deleting <strong>${x.labelPlural}</strong> deletes its fields and every record, in the background. ${held} Its names are
          free again once its records are gone. This cannot be undone.`,
        error: o.error,
      })}`,
  });
}

/** What the toggle and the confirmation speak of: a field or an object, by its name, and its page. */
interface Deletable {
  kind: 'field' | 'object';
  name: string;
  /** Its page; the toggle posts to `<path>/active`, the deletion to `<path>/delete`. */
  path: string;
  isActive: boolean;
}

/** The panel of a field's or an object's page that deactivates it, or reactivates it and leads to its deletion. */
function activeToggle(ctx: SettingsContext, o: Deletable & { hiddenFrom: string; kept: string }): Html {
  return html` <section class="panel" aria-labelledby="${o.kind}-state">
    <h2 id="${o.kind}-state">${o.isActive ? 'Deactivate' : 'Inactive'}</h2>
    ${
      o.isActive
        ? html`<p>
              Deactivating hides <code>${o.name}</code> from ${o.hiddenFrom}; its ${o.kept} are kept and come back if you reactivate it.
              A${o.kind === 'object' ? 'n' : ''} ${o.kind} must be inactive before it can be deleted.
            </p>
            <form method="post" action="${o.path}/active">
              ${csrfField(ctx.csrf)}<input type="hidden" name="active" value="false" />
              <button type="submit" class="secondary">Deactivate ${o.kind}</button>
            </form>`
        : html`<p>
              <code>${o.name}</code> is hidden from ${o.hiddenFrom}; its ${o.kept} are kept. Reactivate it to bring it back, or delete it
              with its ${o.kind === 'field' ? 'values' : 'records'}.
            </p>
            <form method="post" action="${o.path}/active">
              ${csrfField(ctx.csrf)}<input type="hidden" name="active" value="true" />
              <div class="actions">
                <button type="submit" class="secondary">Reactivate ${o.kind}</button
                ><a class="button danger" href="${o.path}/delete">Delete ${o.kind}…</a>
              </div>
            </form>`
    }
  </section>`;
}

/** The confirmation before deleting: the name typed into a required field (no script needed); refused while active. */
function confirmDeleteForm(ctx: SettingsContext, o: Deletable & { what: Html; error?: string }): Html {
  return html` <section class="panel">
    ${
      o.isActive
        ? html`<p class="error" role="alert">${o.name} is active. Deactivate it first on its page, then delete it.</p>
            <a class="button secondary" href="${o.path}">Back to the ${o.kind}</a>`
        : html`<p>${o.what}</p>
            ${errorBox(o.error)}
            <form class="stack" method="post" action="${o.path}/delete">
              ${csrfField(ctx.csrf)}
              <label for="confirm-name">Type <code>${o.name}</code> to confirm</label>
              <input
                id="confirm-name"
                name="confirm"
                required
                autocomplete="off"
                spellcheck="false"
                ${fieldError(errorAbout(o.error, 'confirm'))}
              />
              <div class="actions">
                <button type="submit" class="danger">Delete ${o.kind}</button><a class="button secondary" href="${o.path}">Cancel</a>
              </div>
            </form>`
    }
  </section>`;
}
