/** The one stylesheet: readable from 390 px to wide screens, visible focus, no framework. */
export const STYLESHEET = `
:root { --fg: #1d2230; --muted: #5b6275; --line: #d9dce5; --accent: #3451d1; --bg: #f6f7fb; --danger: #b42318; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
.top { padding: 12px 20px; background: #fff; border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; color: var(--fg); text-decoration: none; }
main.card { max-width: 420px; margin: 40px auto; padding: 28px; background: #fff; border: 1px solid var(--line); border-radius: 10px; }
main.wide { max-width: 1200px; margin: 24px auto; padding: 0 16px; }
h1 { font-size: 1.4rem; margin: 0 0 16px; }
label { display: block; font-weight: 600; margin: 14px 0 4px; }
input, select, textarea { width: 100%; padding: 9px 10px; font: inherit; border: 1px solid var(--line); border-radius: 6px; background: #fff; }
button, .button { display: inline-block; margin-top: 18px; padding: 9px 16px; font: inherit; font-weight: 600; color: #fff;
  background: var(--accent); border: 1px solid var(--accent); border-radius: 6px; cursor: pointer; text-decoration: none; }
button.secondary { color: var(--fg); background: #fff; border-color: var(--line); }
button.danger { background: var(--danger); border-color: var(--danger); }
:focus-visible { outline: 3px solid #f4b400; outline-offset: 2px; }
.error { color: var(--danger); background: #fef3f2; border: 1px solid #fecdca; padding: 8px 10px; border-radius: 6px; }
.muted { color: var(--muted); }
.actions { display: flex; gap: 10px; flex-wrap: wrap; }
.scopes { padding-left: 20px; }
table { width: 100%; border-collapse: collapse; background: #fff; }
th, td { text-align: left; padding: 8px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
.table-wrap { overflow-x: auto; }
main.card h2 { font-size: 1.1rem; margin: 24px 0 4px; }
@media (max-width: 480px) { main.card { margin: 16px; padding: 20px; } }

/* Settings pages */
.top { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 20px; }
.top .who { margin-left: auto; display: flex; flex-wrap: wrap; align-items: center; gap: 8px 16px; font-size: .95rem; }
.switcher { display: flex; align-items: center; gap: 6px; }
.switcher label { margin: 0; font-weight: 600; }
.switcher select { width: auto; max-width: 14rem; padding: 5px 8px; }
.settings { display: grid; grid-template-columns: 200px minmax(0, 1fr); gap: 28px; margin-top: 8px; }
.side ul { list-style: none; margin: 0; padding: 0; }
.side a { display: block; padding: 7px 10px; border-radius: 6px; color: var(--fg); text-decoration: none; }
.side a:hover { background: #e9ecf5; }
.side a[aria-current="page"] { background: #e3e8fb; color: var(--accent); font-weight: 600; }
.content > h1 { margin-top: 4px; }
.panel { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 20px; margin: 0 0 24px; }
.panel > :first-child { margin-top: 0; }
.panel h2 { font-size: 1.1rem; margin: 0 0 8px; }
.gap-top { margin-top: 24px; }
.panel form.stack { max-width: 460px; }
.row-form { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; }
.row-form select { width: auto; padding: 5px 8px; }
button.small, .button.small { margin-top: 0; padding: 5px 10px; font-size: .9rem; }
.button.secondary { color: var(--fg); background: #fff; border-color: var(--line); }
.button.danger { background: var(--danger); border-color: var(--danger); }
a.link-danger { color: var(--danger); }
/* position: the visually hidden labels inside stay inside the scrolling box, not widen the page */
.table-wrap { position: relative; border: 1px solid var(--line); border-radius: 10px; background: #fff; }
td time { white-space: nowrap; }
.table-wrap td { overflow-wrap: break-word; }
.table-wrap .email { overflow-wrap: anywhere; }
.table-wrap table { min-width: 640px; }
.table-wrap th { font-size: .85rem; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); background: #fafbfd; }
.table-wrap tr:last-child td { border-bottom: 0; }
td .muted, .hint { font-size: .9rem; }
.hint { color: var(--muted); margin: 4px 0 0; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: .8rem; font-weight: 600; border: 1px solid; white-space: nowrap; }
.badge.ok { color: #05603a; background: #ecfdf3; border-color: #abefc6; }
.badge.warn { color: #93370d; background: #fffaeb; border-color: #fedf89; }
.badge.off { color: var(--muted); background: #f2f4f7; border-color: var(--line); }
.notice { background: #fffaeb; border: 1px solid #fedf89; padding: 10px 12px; border-radius: 6px; }
.success { background: #ecfdf3; border: 1px solid #abefc6; padding: 10px 12px; border-radius: 6px; }
.secret { display: flex; gap: 8px; align-items: stretch; flex-wrap: wrap; }
.secret input { flex: 1 1 280px; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .92rem; background: #f6f7fb; }
.secret button { margin-top: 0; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .88rem; }
pre { background: #1d2230; color: #f6f7fb; padding: 12px; border-radius: 6px; overflow-x: auto; white-space: pre-wrap; word-break: break-all; }
fieldset { border: 1px solid var(--line); border-radius: 8px; margin: 14px 0 0; padding: 8px 14px 12px; }
legend { font-weight: 600; padding: 0 4px; }
.checks { display: flex; flex-wrap: wrap; gap: 4px 18px; }
.check { display: flex; align-items: center; gap: 6px; }
.check input { width: auto; margin: 0; }
.check label { display: inline; margin: 0; font-weight: 400; }
/* a checkbox inside its own label (label > input) keeps to the label's line */
label.check { display: flex; margin: 14px 0 0; }
td .badge { white-space: normal; overflow-wrap: anywhere; }
/* URLs and ids are single long words: they wrap where needed instead of widening the page */
.content { overflow-wrap: break-word; }
.content code { overflow-wrap: anywhere; }
/* the roles form: an object's fields with Read and Update boxes; a long field name wraps rather than widening the form */
.field-permissions > summary { cursor: pointer; }
.field-permissions table { table-layout: fixed; }
.field-permissions th:not(:first-child), .field-permissions td:not(:first-child) { width: 5.5rem; text-align: center; }
/* a column head is one word: never broken inside it (.content lets long words wrap anywhere) */
.field-permissions th { white-space: nowrap; overflow-wrap: normal; }
.field-permissions td:first-child { overflow-wrap: anywhere; }
/* the data model page: an object's add form under its table, and one line per select option */
.table-wrap table.fields .badge { white-space: nowrap; }
details.add-field > summary { cursor: pointer; font-weight: 600; color: var(--accent); }
details.add-field[open] > summary { margin-bottom: 4px; }
textarea { resize: vertical; }
.option-row { display: flex; flex-wrap: wrap; gap: 0 12px; align-items: flex-end; padding: 4px 0 8px; border-bottom: 1px solid var(--line); }
.option-row:last-child { border-bottom: 0; }
.option-row > div { flex: 1 1 150px; min-width: 0; }
.option-row .option-value { flex: 0 1 9rem; padding-bottom: 9px; overflow-wrap: anywhere; }
.option-row .option-value .muted { font-size: .85rem; font-weight: 600; }
label.check.option-remove { margin: 0; padding-bottom: 9px; font-weight: 400; }
.perm-list { margin: 0; padding: 0; list-style: none; font-size: .9rem; }
/* the audit log's filter: Who and What side by side where they fit, one under the other on a phone */
form.filters { display: flex; flex-wrap: wrap; gap: 0 16px; align-items: flex-end; margin: 0 0 16px; }
form.filters > div { flex: 1 1 240px; min-width: 0; }
form.filters > .error, form.filters > .hint { flex-basis: 100%; }
form.filters .actions { flex: 0 1 auto; align-items: center; }
form.filters .actions a { margin-top: 18px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr)); gap: 14px; }
.cards a { display: block; padding: 14px; background: #fff; border: 1px solid var(--line); border-radius: 10px; color: var(--fg); text-decoration: none; }
.cards a strong { color: var(--accent); }
.skip-link { position: absolute; left: 12px; top: -100px; z-index: 10; padding: 8px 14px; background: #fff; color: var(--accent); font-weight: 600; border: 2px solid var(--accent); border-radius: 6px; }
.skip-link:focus { top: 8px; }
/* the skip link's target takes focus so the next Tab starts there; it needs no ring of its own */
[tabindex="-1"]:focus { outline: none; }
.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
/*
 * Narrow screens: a table's rows become cards, each cell labelled with its column
 * (data-label), so the Actions column is in reach instead of behind a sideways scroll
 * with no cue (WCAG 2.2 SC 1.4.10 Reflow).
 */
@media (max-width: 600px) {
  .table-wrap { border: 0; background: none; }
  .table-wrap table { min-width: 0; background: none; }
  .table-wrap table, .table-wrap tbody, .table-wrap tr, .table-wrap td { display: block; width: 100%; }
  .table-wrap thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  .table-wrap tr { background: #fff; border: 1px solid var(--line); border-radius: 10px; margin: 0 0 12px; padding: 6px 0; }
  .table-wrap td { border: 0; padding: 4px 12px; }
  .table-wrap td[data-label]::before { content: attr(data-label); display: block; font-size: .8rem; font-weight: 600; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); }
  .table-wrap td[data-label=""]::before { content: none; }
  /* a card shows no label over nothing (an attempt that got no response body) */
  .table-wrap td:empty { display: none; }
}
@media (max-width: 760px) {
  .settings { grid-template-columns: minmax(0, 1fr); gap: 12px; }
  .side ul { display: flex; flex-wrap: wrap; gap: 4px; }
  .side a { padding: 5px 9px; border: 1px solid var(--line); background: #fff; }
  .top .who { margin-left: 0; }
  .panel { padding: 14px; }
}
`;
