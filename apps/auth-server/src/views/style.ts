/** The one stylesheet: readable from 390 px to wide screens, visible focus, no framework. */
export const STYLESHEET = `
:root { --fg: #1d2230; --muted: #5b6275; --line: #d9dce5; --accent: #3451d1; --bg: #f6f7fb; --danger: #b42318; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
.top { padding: 12px 20px; background: #fff; border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; color: var(--fg); text-decoration: none; }
main.card { max-width: 420px; margin: 40px auto; padding: 28px; background: #fff; border: 1px solid var(--line); border-radius: 10px; }
main.wide { max-width: 1100px; margin: 24px auto; padding: 0 16px; }
h1 { font-size: 1.4rem; margin: 0 0 16px; }
label { display: block; font-weight: 600; margin: 14px 0 4px; }
input, select { width: 100%; padding: 9px 10px; font: inherit; border: 1px solid var(--line); border-radius: 6px; background: #fff; }
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
@media (max-width: 480px) { main.card { margin: 16px; padding: 20px; } }
`;
