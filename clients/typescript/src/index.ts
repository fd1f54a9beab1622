// Weir's API client: `openapi-fetch` over the types generated from Weir's OpenAPI document
// (`src/schema.ts`, made by `scripts/clients.sh`), an access token from client credentials
// kept until shortly before it expires, and `verify` for deliveries.
import createFetchClient, { type Client, type Middleware } from "openapi-fetch";
import type { paths } from "./schema.js";

export type { paths, components, operations } from "./schema.js";
export { verify, standardKey, type HeaderSource, type VerifyOptions } from "./verify.js";

/** An API client's credentials (`weir admin client create`). */
export interface Credentials {
  clientId: string;
  clientSecret: string;
}

export interface WeirOptions {
  /** Where Weir answers, e.g. `https://weir.example.com`. */
  baseUrl: string;
  credentials: Credentials;
  /** A `fetch` of your own (default: the global one). */
  fetch?: typeof globalThis.fetch;
}

/** Access tokens for a client (OAuth 2.0 client credentials at `POST /oauth/token`): one is
 * kept until a minute before it expires, and forgotten when Weir refuses it. */
export class TokenSource {
  private kept?: { token: string; until: number };
  private pending?: Promise<string>;

  constructor(
    private readonly baseUrl: string,
    private readonly credentials: Credentials,
    private readonly fetcher: typeof globalThis.fetch = globalThis.fetch,
  ) {}

  /** A live access token. */
  async token(): Promise<string> {
    if (this.kept && Date.now() < this.kept.until) return this.kept.token;
    this.pending ??= this.fetchToken().finally(() => (this.pending = undefined));
    return this.pending;
  }

  /** Forgets the kept token (the next call asks for another). */
  forget(): void {
    this.kept = undefined;
  }

  private async fetchToken(): Promise<string> {
    const form = new URLSearchParams({
      grant_type: "client_credentials",
      client_id: this.credentials.clientId,
      client_secret: this.credentials.clientSecret,
    });
    const answer = await this.fetcher(new URL("/oauth/token", this.baseUrl), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form,
    });
    if (!answer.ok) throw new Error(`Weir refused the client's credentials: ${answer.status} ${await answer.text()}`);
    const granted = (await answer.json()) as { access_token: string; expires_in?: number };
    const lifetime = (granted.expires_in ?? 3600) * 1000;
    this.kept = { token: granted.access_token, until: Date.now() + Math.max(lifetime - 60_000, lifetime / 2) };
    return granted.access_token;
  }
}

/** A typed client of Weir's API that authenticates itself. */
export function createClient(options: WeirOptions): Client<paths> {
  const tokens = new TokenSource(options.baseUrl, options.credentials, options.fetch);
  const client = createFetchClient<paths>({ baseUrl: options.baseUrl, fetch: options.fetch });
  const auth: Middleware = {
    async onRequest({ request }) {
      request.headers.set("authorization", `Bearer ${await tokens.token()}`);
      return request;
    },
    async onResponse({ response }) {
      if (response.status === 401) tokens.forget();
      return response;
    },
  };
  client.use(auth);
  return client;
}
