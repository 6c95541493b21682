/** Server-rendered pages: escaped by default, no front-end framework, usable without JavaScript. */
export type Html = { readonly __html: string };

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escape(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** Tagged template: interpolated values are escaped unless they are Html themselves. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  const render = (v: unknown): string =>
    Array.isArray(v) ? v.map(render).join('') : v && typeof v === 'object' && '__html' in v ? (v as Html).__html : escape(v);
  return { __html: strings.reduce((out, s, i) => out + s + (i < values.length ? render(values[i]) : ''), '') };
}

export function page(title: string, body: Html, options: { wide?: boolean; header?: Html; script?: string } = {}): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} · Workspace Records</title>
<link rel="stylesheet" href="/oauth/assets/style.css">
${options.script ? `<script src="${escape(options.script)}" defer></script>\n` : ''}</head>
<body>
<header class="top"><a class="brand" href="/settings">Workspace Records</a>${options.header?.__html ?? ''}</header>
<main class="${options.wide ? 'wide' : 'card'}">
${body.__html}
</main>
</body>
</html>`;
}

export function csrfField(token: string): Html {
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

export function errorBox(message: string | undefined): Html {
  return message ? html`<p class="error" role="alert">${message}</p>` : html``;
}
