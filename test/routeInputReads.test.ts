import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

/**
 * Route handlers read what their route's schemas parsed (api/routeInput.ts), never the raw request:
 * a raw read is input that no schema checks, that Rucio's error for a bad value does not cover,
 * and that /openapi.json does not describe. Headers are not request input in this sense (tokens,
 * X-Svc-Account, the client's wishes) and may be read.
 */
const ROOT = resolve(import.meta.dirname, '..');
const ROUTES = join(ROOT, 'api', 'routes');

/** Ways to reach the path variables, the query or the body without the route's schemas. */
const RAW_READS: readonly RegExp[] = [
  /\bctx\s*\.\s*(?:query|querystring|search|params)\b/g,
  /\bctx\s*\.\s*request\s*\.\s*(?:query|querystring|search|body|rawBody)\b/g,
  /\bctx\s*\.\s*state\s*\.\s*body\b/g,
  // The raw request: its body stream.
  /\bctx\s*\.\s*req\b/g,
  // Destructured: `const { query } = ctx`, `= ctx.request`, `= ctx.state`.
  /\{[^{}]*\b(?:query|querystring|search|params|body|req|request)\b[^{}]*\}\s*=\s*ctx\b(?:\s*\.\s*(?:request|state)\b)?/g,
];

type Allowed = Readonly<{ file: string; read: string; count: number; why: string }>;

/**
 * The places that must read the raw request, each with the number of reads allowed and why. A
 * listing whose clients send URL-encoded JSON needs no entry: it declares a query schema and reads
 * the text through `queryStringOf`.
 */
const ALLOWED: readonly Allowed[] = [
  {
    file: 'api/routes/auth/oidcRoutes.ts',
    read: 'ctx.querystring',
    count: 3,
    why:
      "OpenID Connect's redirects: the query string is the provider's authorization answer (or, for a " +
      "polling client, Rucio's `?<code>`), handed whole to the OIDC library, which checks it",
  },
  {
    file: 'api/routes/did/didListRoutes.ts',
    read: 'ctx.querystring',
    count: 2,
    why: "GET /dids/{scope}: the redirect to `/dids/{scope}/` passes the query on as sent, unread (Werkzeug's slash redirect)",
  },
];

const sourceFiles = (folder: string): string[] =>
  readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });

/** The text without its comments (a comment may name `ctx.query` to explain why it is not read). */
const withoutComments = (text: string): string =>
  text.replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ' ')).replace(/^\s*\/\/.*$/gm, '');

/** Each raw read of `text`: what it reads, compacted (`ctx.querystring`), and its line. */
const rawReadsOf = (text: string): { read: string; line: number }[] => {
  const code = withoutComments(text);
  return RAW_READS.flatMap((pattern) =>
    [...code.matchAll(pattern)].map((match) => ({
      read: match[0].replace(/\s+/g, ''),
      line: code.slice(0, match.index).split('\n').length,
    })),
  );
};

describe('Architecture: route handlers read their parsed input, not the raw request', () => {
  const reads = sourceFiles(ROUTES).flatMap((path) => {
    const file = relative(ROOT, path).split('\\').join('/');
    return rawReadsOf(readFileSync(path, 'utf8')).map((read) => ({ file, ...read }));
  });
  const countOf = (file: string, read: string) =>
    reads.filter((found) => found.file === file && found.read === read).length;

  it('finds no raw read of the query, the path variables or the body beyond the allowed ones', () => {
    const unexplained = reads.filter(
      ({ file, read }) =>
        countOf(file, read) > (ALLOWED.find((allowed) => allowed.file === file && allowed.read === read)?.count ?? 0),
    );
    expect(unexplained.map(({ file, line, read }) => `${file}:${line}: ${read}`)).to.deep.equal([]);
  });

  it('keeps no allowance that is no longer used', () => {
    const stale = ALLOWED.filter(({ file, read, count }) => countOf(file, read) !== count);
    expect(
      stale.map(({ file, read, count }) => `${file}: ${read} allowed ${count}, found ${countOf(file, read)}`),
    ).to.deep.equal([]);
  });

  it('recognises every way of reading the raw request it forbids', () => {
    const samples = [
      'ctx.query.limit',
      'ctx.querystring',
      'ctx.params.scope',
      'ctx.request.body',
      'ctx.request.query',
      'ctx.state.body',
      'ctx.req.on',
      'const { query } = ctx;',
      'const { body } = ctx.request;',
    ];
    expect(samples.filter((sample) => rawReadsOf(sample).length !== 1)).to.deep.equal([]);
    expect(rawReadsOf('// ctx.query is not read here\nctx.get("X-Svc-Account"); ctx.state.issuer')).to.deep.equal([]);
  });
});
