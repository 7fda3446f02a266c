import { generateKeyPairSync, randomBytes, randomUUID, createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JWK } from 'jose';
import type { ClientMetadata, Configuration, default as ProviderClass } from 'oidc-provider';

/**
 * A real OpenID Connect provider for the tests: `oidc-provider` (the certified implementation),
 * on a free loopback port, with the in-memory adapter and its development login and consent
 * pages, which `authorize` drives over HTTP as a browser would. It plays INDIGO IAM: access tokens
 * are JWTs whose `aud` is the `audience` asked for (default `rucio`) and whose `scope` lists the
 * scopes granted, signed with a key generated here.
 */
export type TestOidcProvider = {
  /** The issuer URL: `http://127.0.0.1:<port>`. */
  issuer: string;
  /** Requests received, by path (`/jwks`, `/.well-known/openid-configuration`, ...). */
  requestCounts: Map<string, number>;
  /** Registers one more client (the service under test, or the test's own). */
  addClient(client: ClientMetadata): Promise<void>;
  /**
   * Logs `user` in and consents, following redirects from `url` (an authorization URL, or a URL
   * that redirects to one) until the provider sends the browser outside itself; returns that URL
   * (the client's redirect URI with `code` and `state`).
   */
  authorize(url: string, user: string): Promise<URL>;
  /**
   * A token as a command-line tool (oidc-agent, htgettoken) gets one for the user: the code flow
   * with PKCE as the provider's own public client `test-cli`. Default audience `rucio`, scope
   * `openid profile`.
   */
  accessToken(user: string, options?: { audience?: string; scope?: string; ttlSeconds?: number }): Promise<string>;
  /** How long the tokens a client gets for itself (client credentials) last from now on, in seconds. */
  setClientCredentialsTtl(seconds: number): void;
  /** A new signing key replaces the current one; `keepOld` leaves the old one in the JWKS. */
  rotateKeys(options?: { keepOld?: boolean }): Promise<void>;
  /** The current signing key's private JWK (to sign tokens the provider never issued, with its kid). */
  signingKey(): JWK;
  stop(): Promise<void>;
};

const CLI_CLIENT = 'test-cli';
const CLI_REDIRECT = 'http://127.0.0.1/test-cli/callback';

const newSigningKey = (): JWK => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg: 'RS256', use: 'sig' };
};

const base64url = (bytes: Buffer): string => bytes.toString('base64url');

/**
 * oidc-provider warns on stderr that it wants Node 22 (it runs on 20, which this project targets)
 * and that its in-memory adapter and development pages are for development: both known here.
 */
const withoutProviderWarnings = async <T>(work: () => T | Promise<T>): Promise<T> => {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] !== 'string' || !args[0].startsWith('oidc-provider WARNING')) warn(...args);
  };
  try {
    return await work();
  } finally {
    console.warn = warn;
  }
};

export const startTestOidcProvider = async (): Promise<TestOidcProvider> => {
  const Provider = await withoutProviderWarnings(async () => (await import('oidc-provider')).default);
  let keys: JWK[] = [newSigningKey()];
  const clients: ClientMetadata[] = [
    {
      client_id: CLI_CLIENT,
      token_endpoint_auth_method: 'none',
      redirect_uris: [CLI_REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    },
  ];
  // Access-token lifetimes asked for by `accessToken`, by user.
  const ttlByUser = new Map<string, number>();
  // The lifetime of the tokens services get for themselves (`setClientCredentialsTtl`).
  let clientCredentialsTtl = 3600;
  const requestCounts = new Map<string, number>();
  let provider: ProviderClass | undefined;

  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    requestCounts.set(path, (requestCounts.get(path) ?? 0) + 1);
    if (!provider) {
      response.statusCode = 503;
      response.end();
      return;
    }
    void provider.callback()(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const cookieKeys = [randomBytes(16).toString('hex')];
  const configuration = (): Configuration => ({
    clients,
    jwks: { keys },
    cookies: { keys: cookieKeys },
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id, name: `User ${id}` }) }),
    claims: { openid: ['sub'], profile: ['name'] },
    scopes: ['openid', 'profile', 'offline_access'],
    // IAM takes the audience of access tokens from an `audience` parameter.
    extraParams: ['audience'],
    ttl: {
      AccessToken: (_ctx, token) => ttlByUser.get(token.accountId ?? '') ?? 3600,
      AuthorizationCode: 60,
      IdToken: 3600,
      RefreshToken: 86_400,
      Interaction: 600,
      Session: 3600,
      Grant: 86_400,
      ClientCredentials: () => clientCredentialsTtl,
    },
    features: {
      devInteractions: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // IAM reads `audience` from the authorization request, and from the token request of a
        // client asking for a token of its own (Rucio's `request_token` sends it there).
        defaultResource: (ctx) =>
          `urn:audience:${String(ctx.oidc.params?.audience || (ctx.oidc.body as { audience?: unknown } | undefined)?.audience || 'rucio')}`,
        useGrantedResource: () => true,
        // A service asking for a token of its own (client credentials) gets the scopes it asks for,
        // as IAM grants a client the storage scopes its policy allows.
        getResourceServerInfo: (ctx, resource) => ({
          audience: resource.replace(/^urn:audience:/, ''),
          scope:
            ctx.oidc.route === 'token' && ctx.oidc.params?.grant_type === 'client_credentials'
              ? String(ctx.oidc.params.scope ?? '')
              : 'openid profile offline_access',
          accessTokenFormat: 'jwt',
        }),
      },
      clientCredentials: { enabled: true },
    },
    // Consent is given once per grant, like IAM's "remember this decision".
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session?.grantIdFor(ctx.oidc.client!.clientId);
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    pkce: { required: () => true },
    renderError: (ctx, out) => {
      ctx.type = 'json';
      ctx.body = out;
    },
  });
  const build = async () => {
    const built = await withoutProviderWarnings(() => new Provider(issuer, configuration()));
    // Errors the provider answers are the test's to read, not to log.
    built.on('server_error', () => undefined);
    return built;
  };
  provider = await build();

  const authorize = async (start: string, user: string): Promise<URL> => {
    const cookies = new Map<string, string>();
    const send = async (url: URL, init: RequestInit = {}): Promise<Response> => {
      const response = await fetch(url, {
        ...init,
        redirect: 'manual',
        headers: {
          ...(init.headers ?? {}),
          cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        },
      });
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const at = pair!.indexOf('=');
        cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
      }
      return response;
    };
    let url = new URL(start);
    for (let step = 0; step < 20; step += 1) {
      if (url.origin !== issuer) {
        // The service's own redirect (its oidc_redirect page) leads on to the provider.
        const response = await send(url);
        const location = response.headers.get('location');
        if (!location || url.origin === new URL(location, url).origin) return url;
        url = new URL(location, url);
        continue;
      }
      const interaction = /^\/interaction\/([^/]+)$/.exec(url.pathname);
      let response: Response;
      if (interaction) {
        const page = await (await send(url)).text();
        const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1];
        if (!prompt) throw new Error(`the provider's interaction page has no prompt: ${page.slice(0, 500)}`);
        const form = new URLSearchParams({ prompt, login: user, password: 'any' });
        response = await send(url, {
          method: 'POST',
          body: form.toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
      } else {
        response = await send(url);
      }
      const location = response.headers.get('location');
      if (!location)
        throw new Error(`the provider answered ${response.status} at ${url.href}: ${await response.text()}`);
      url = new URL(location, url);
      if (url.origin !== issuer && !url.pathname.startsWith('/interaction')) {
        if (url.pathname.endsWith('/oidc_redirect')) continue;
        return url;
      }
    }
    throw new Error('the provider kept redirecting');
  };

  const accessToken = async (
    user: string,
    options: { audience?: string; scope?: string; ttlSeconds?: number } = {},
  ): Promise<string> => {
    const verifier = base64url(randomBytes(32));
    const state = base64url(randomBytes(16));
    if (options.ttlSeconds !== undefined) ttlByUser.set(user, options.ttlSeconds);
    const authUrl = new URL(`${issuer}/auth`);
    authUrl.search = new URLSearchParams({
      client_id: CLI_CLIENT,
      response_type: 'code',
      redirect_uri: CLI_REDIRECT,
      scope: options.scope ?? 'openid profile',
      audience: options.audience ?? 'rucio',
      state,
      code_challenge: base64url(createHash('sha256').update(verifier).digest()),
      code_challenge_method: 'S256',
    }).toString();
    const callback = await authorize(authUrl.href, user);
    const code = callback.searchParams.get('code');
    if (!code || callback.searchParams.get('state') !== state) throw new Error(`no code came back: ${callback.href}`);
    const response = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: CLI_CLIENT,
        code,
        redirect_uri: CLI_REDIRECT,
        code_verifier: verifier,
      }).toString(),
    });
    const body = (await response.json()) as { access_token?: string };
    if (!body.access_token) throw new Error(`no access token: ${JSON.stringify(body)}`);
    return body.access_token;
  };

  return {
    issuer,
    requestCounts,
    async addClient(client) {
      clients.push(client);
      provider = await build();
    },
    authorize,
    accessToken,
    async rotateKeys(options = {}) {
      keys = options.keepOld ? [newSigningKey(), ...keys] : [newSigningKey()];
      provider = await build();
    },
    signingKey: () => keys[0]!,
    setClientCredentialsTtl: (seconds) => {
      clientCredentialsTtl = seconds;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
