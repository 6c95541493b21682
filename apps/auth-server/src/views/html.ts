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

/**
 * `contentInside`: the body holds its own element with id="content" (the settings pages,
 * whose menu comes first inside main), where the skip link leads (WCAG 2.2 SC 2.4.1).
 */
export function page(
  title: string,
  body: Html,
  options: { wide?: boolean; header?: Html; script?: string; contentInside?: boolean } = {},
): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} · Workspace Records</title>
<link rel="stylesheet" href="/oauth/assets/style.css">
${options.script ? `<script src="${escape(options.script)}" defer></script>\n` : ''}</head>
<body>
<a class="skip-link" href="#content">Skip to content</a>
<header class="top"><a class="brand" href="/settings">Workspace Records</a>${options.header?.__html ?? ''}</header>
<main class="${options.wide ? 'wide' : 'card'}"${options.contentInside ? '' : ' id="content" tabindex="-1"'}>
${body.__html}
</main>
</body>
</html>`;
}

export function csrfField(token: string): Html {
  return html`<input type="hidden" name="_csrf" value="${token}" />`;
}

/** The id lets the fields the message is about point at it (fieldError). */
export function errorBox(message: string | undefined, id = FORM_ERROR): Html {
  return message ? html`<p class="error" role="alert" id="${id}">${message}</p>` : html``;
}

const FORM_ERROR = 'form-error';

/**
 * Whether a form's error is about a field: the validation messages open with the field's
 * name ("name must be 1 to 100 characters", "Wrong e-mail or password."), so the page tells
 * which field is wrong without each controller saying so. `names` are the words for it.
 */
export function errorAbout(message: string | undefined, ...names: string[]): boolean {
  return errorAt(message, ...names) >= 0;
}

/** Where a form's error first names one of `names` (-1: nowhere), to tell which field it is mostly about. */
export function errorAt(message: string | undefined, ...names: string[]): number {
  if (!message) return -1;
  const found = names.map((n) => message.search(new RegExp(`(^|[^a-z-])${n}([^a-z-]|$)`, 'i'))).filter((i) => i >= 0);
  return found.length ? Math.min(...found) : -1;
}

/**
 * aria-invalid and aria-describedby for a field (WCAG 2.2 SC 3.3.1 and 1.3.1): screen
 * readers then read the error with the field, after the field's own `hints` (ids).
 */
export function fieldError(invalid: boolean, hints = ''): Html {
  const described = [hints, invalid ? FORM_ERROR : ''].filter(Boolean).join(' ');
  return html`${invalid ? html` aria-invalid="true"` : html``}${described ? html` aria-describedby="${described}"` : html``}`;
}
