/**
 * A headless "browser" for server-rendered pages: keeps cookies per host, follows
 * redirects by hand (so the test sees where it lands), reads forms and submits them.
 */
export class FormBrowser {
  private readonly cookies = new Map<string, string>();
  /** Redirects to URLs starting with this are not followed (an OAuth redirect_uri). */
  constructor(private readonly stopAt?: string) {}

  lastUrl = '';
  lastStatus = 0;
  lastBody = '';

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  /** Sets a cookie as another page on the same host could (cookies are not isolated by port). */
  setCookie(name: string, value: string): void {
    this.cookies.set(name, value);
  }

  private remember(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*expires=Thu, 01 Jan 1970/i.test(a)) || attrs.some((a) => /^\s*max-age=0/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  /** GET or POST, following redirects until a page (or the stopAt URL) is reached. */
  async go(url: string, init: { method?: string; form?: Record<string, string | string[]> } = {}): Promise<string> {
    let method = init.method ?? 'GET';
    let body: string | undefined = init.form
      ? new URLSearchParams(
          Object.entries(init.form).flatMap(([k, v]) =>
            Array.isArray(v) ? v.map((one): [string, string] => [k, one]) : [[k, v] as [string, string]],
          ),
        ).toString()
      : undefined;
    let current = url;
    for (let hops = 0; hops < 20; hops++) {
      if (this.stopAt && current.startsWith(this.stopAt)) {
        this.lastUrl = current;
        return current;
      }
      const res = await fetch(current, {
        method,
        body,
        redirect: 'manual',
        headers: {
          cookie: this.cookieHeader(),
          ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
      });
      this.remember(res);
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        current = new URL(location, current).toString();
        method = 'GET';
        body = undefined;
        continue;
      }
      this.lastUrl = current;
      this.lastStatus = res.status;
      this.lastBody = await res.text();
      return current;
    }
    throw new Error(`too many redirects from ${url}`);
  }

  /** Submits the page's form (the one whose button has this text), filling the given fields. */
  async submit(buttonText: string, fields: Record<string, string> = {}): Promise<string> {
    const forms = [...this.lastBody.matchAll(/<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)];
    const form = forms.find((f) => new RegExp(`<button[^>]*>\\s*${buttonText}\\s*</button>`).test(f[2]));
    if (!form) throw new Error(`no form with a "${buttonText}" button on ${this.lastUrl}:\n${this.lastBody.slice(0, 2000)}`);
    const values: Record<string, string> = {};
    for (const input of form[2].matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g))
      values[input[1]] = decode(input[2]);
    const button = new RegExp(`<button[^>]*name="([^"]+)"[^>]*value="([^"]+)"[^>]*>\\s*${buttonText}\\s*</button>`).exec(form[2]);
    if (button) values[button[1]] = button[2];
    return this.go(new URL(decode(form[1]), this.lastUrl).toString(), { method: 'POST', form: { ...values, ...fields } });
  }

  /** The accessible labels of the current page (label text), to check the pages' wording. */
  labels(): string[] {
    return [...this.lastBody.matchAll(/<label[^>]*>([^<]+)<\/label>/g)].map((m) => m[1].trim());
  }
}

function decode(value: string): string {
  return value
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
}
