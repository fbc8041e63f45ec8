/**
 * The browser part of an OAuth flow, in plain HTTP: follows redirects with a cookie jar and submits oidc-provider's
 * dev-interaction forms (login with any name and password, then consent). Stops at the first redirect to `stopAt`,
 * so a test can look at (or tamper with) the callback before our API sees it.
 */

interface Page {
  url: string;
  status: number;
  location: string | null;
  body: string;
}

class CookieJar {
  private readonly cookies = new Map<string, string>();

  store(response: Response): void {
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(';');
      const separator = pair?.indexOf('=') ?? -1;
      if (!pair || separator < 0) continue;
      const name = pair.slice(0, separator).trim();
      const value = pair.slice(separator + 1).trim();
      // oidc-provider clears finished interactions with an empty, expired cookie.
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(header)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/** Walks the authorization server's pages like a user who signs in and consents. */
export class TestBrowser {
  private readonly jar = new CookieJar();

  async request(url: string, form?: Record<string, string>): Promise<Page> {
    const response = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: this.jar.header(),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form ? new URLSearchParams(form) : undefined,
    });
    this.jar.store(response);
    const location = response.headers.get('location');
    return {
      url,
      status: response.status,
      location: location ? new URL(location, url).toString() : null,
      body: await response.text(),
    };
  }

  /**
   * Follows `authorizationUrl` through login and consent until the server redirects to a URL starting with `stopAt`,
   * and returns that URL (the callback with `code` and `state`, or with `error`).
   */
  async authorize(authorizationUrl: string, stopAt: string, login = 'octocat'): Promise<URL> {
    let page = await this.request(authorizationUrl);
    for (let step = 0; step < 20; step += 1) {
      if (page.location?.startsWith(stopAt)) return new URL(page.location);
      if (page.location) {
        page = await this.request(page.location);
        continue;
      }
      const form = formOf(page);
      if (!form) throw new Error(`Stuck at ${page.url} (${page.status}): ${page.body.slice(0, 500)}`);
      const fields: Record<string, string> = { ...form.hidden };
      if (fields.prompt === 'login') Object.assign(fields, { login, password: 'any-password' });
      page = await this.request(form.action, fields);
    }
    throw new Error('Too many steps in the authorization flow');
  }
}

function formOf(page: Page): { action: string; hidden: Record<string, string> } | null {
  const form = /<form[^>]*action="([^"]+)"[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/i.exec(page.body);
  if (!form) return null;
  const hidden: Record<string, string> = {};
  for (const input of (form[2] as string).matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/gi)) {
    hidden[input[1] as string] = input[2] as string;
  }
  return { action: new URL(decodeEntities(form[1] as string), page.url).toString(), hidden };
}

function decodeEntities(text: string): string {
  return text
    .replace(/&#x2F;/gi, '/')
    .replace(/&amp;/g, '&')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"');
}
