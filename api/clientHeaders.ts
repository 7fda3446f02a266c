import type { Middleware } from 'koa';
import type { AppState } from './services.ts';

/**
 * The header names the service speaks (DMS_CLIENT_HEADERS). The specification renames every
 * `X-Rucio-*` header `X-Svc-*`, and that stays the default (`svc`). In `rucio` mode the stock
 * Rucio client and the tools built on it work unmodified: every `X-Rucio-*` request header is also
 * read as its `X-Svc-*` twin (an `X-Svc-*` header sent alongside wins), and every `X-Svc-*`
 * response header is also sent under its `X-Rucio-*` name, `Access-Control-Expose-Headers`
 * listing both. Nothing past this edge knows: routes read and write `X-Svc-*` only.
 */
export type ClientHeaders = 'svc' | 'rucio';

const SVC = 'x-svc-';
const RUCIO = 'x-rucio-';

export const clientHeaders = (
  mode: ClientHeaders,
  /**
   * Headers only a trusted proxy may set (DMS_X509_DN_HEADER, DMS_GSS_REMOTE_USER_HEADER): never
   * made from a client's X-Rucio-* header, or a client could name itself where the proxy sent none.
   */
  proxyHeaders: readonly (string | undefined)[] = [],
): Middleware<AppState> => {
  const trusted = new Set(proxyHeaders.filter((name) => name !== undefined).map((name) => name.toLowerCase()));
  return async (ctx, next) => {
    ctx.state.clientHeaders = mode;
    if (mode === 'svc') return next();
    const headers = ctx.req.headers;
    for (const [name, value] of Object.entries(headers)) {
      const twin = `${SVC}${name.slice(RUCIO.length)}`;
      if (name.startsWith(RUCIO) && headers[twin] === undefined && !trusted.has(twin)) headers[twin] = value;
    }
    await next();
    for (const [name, value] of Object.entries(ctx.response.headers)) {
      if (!name.startsWith(SVC) || value === undefined) continue;
      const twin = `${RUCIO}${name.slice(SVC.length)}`;
      if (ctx.response.headers[twin] === undefined) ctx.set(twin, typeof value === 'number' ? String(value) : value);
    }
    const exposed = ctx.response.get('Access-Control-Expose-Headers');
    if (exposed) ctx.set('Access-Control-Expose-Headers', withRucioTwins(exposed));
  };
};

/** `X-Svc-Auth-Token, X-Svc-Auth-Account` → the same followed by `X-Rucio-Auth-Token, X-Rucio-Auth-Account`. */
const withRucioTwins = (list: string): string => {
  const names = list.split(',').map((name) => name.trim());
  const twins = names
    .filter((name) => name.toLowerCase().startsWith(SVC))
    .map((name) => `X-Rucio-${name.slice(SVC.length)}`)
    .filter((twin) => !names.some((name) => name.toLowerCase() === twin.toLowerCase()));
  return [...names, ...twins].join(', ');
};

/**
 * The reason of a refusal for want of request headers (`X-Svc-*` names), naming them as this
 * server reads them, and saying so when they came under their `X-Rucio-*` names, which only the
 * `rucio` mode reads: a stock Rucio client against a default server gets told what to change.
 * The Python client shows a failed login's message from its header copy, cut at 125 characters,
 * so the hint comes first.
 */
export const missingHeaders = (
  ctx: { get(name: string): string; state: Pick<AppState, 'clientHeaders'> },
  reason: string,
  names: readonly string[],
): string => {
  const rucio = (name: string) => `X-Rucio-${name.slice(SVC.length)}`;
  const accepted =
    ctx.state.clientHeaders === 'rucio' ? names.map((name) => `${rucio(name)} (or ${name})`) : [...names];
  const header = accepted.length === 1 ? `the ${accepted[0]} header` : `the ${accepted.join(' and ')} headers`;
  const sentAsRucio = names.filter((name) => !ctx.get(name) && ctx.get(rucio(name)));
  const wanted = `${reason}: send ${header}.`;
  if (ctx.state.clientHeaders === 'rucio' || sentAsRucio.length === 0) return wanted;
  return (
    `${sentAsRucio.map(rucio).join(', ')} sent, but this server reads X-Svc-* headers unless started with ` +
    `DMS_CLIENT_HEADERS=rucio. ${wanted}`
  );
};
