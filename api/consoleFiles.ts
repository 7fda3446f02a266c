import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import type { Middleware } from 'koa';
import { packageRoot } from '../infra/moduleFiles.ts';
import type { AppState } from './services.ts';

/** The web console's files (plain ES modules, no build): console/ at the top of the repository. */
export const CONSOLE_DIR = join(packageRoot(import.meta.url), 'console');

/** Only these are served; anything else in the folder (its tsconfig.json, notes) stays private. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/**
 * The page loads nothing but its own files and talks to nothing but this server: no inline
 * script or style (the pages set styles through the CSSOM, which a CSP allows), no frames
 * around it, no plugins, forms posting only here.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

type ConsoleFile = Readonly<{ body: Buffer; type: string; etag: string }>;

let files: ReadonlyMap<string, ConsoleFile> | undefined;

/** The console's files, read once (a few dozen small files): path below /console/ → file. */
const consoleFiles = (): ReadonlyMap<string, ConsoleFile> => {
  if (files) return files;
  const found = new Map<string, ConsoleFile>();
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      const type = CONTENT_TYPES[extname(entry.name)];
      if (!entry.isFile() || !type) continue;
      const body = readFileSync(path);
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
      found.set(relative(CONSOLE_DIR, path).split(sep).join('/'), { body, type, etag });
    }
  };
  walk(CONSOLE_DIR);
  files = found;
  return found;
};

/**
 * Serves the web console at /console/ from this process, without a token (the page itself holds
 * nothing; every call it makes sends the token the person logged in with). `/console` redirects
 * to `/console/`, so that the page's relative URLs resolve under it. Files are revalidated on every
 * load (`no-cache` with an ETag: 304 when unchanged), as their names carry no version. A path with
 * no file goes on to the routes (`/console/session`, ...), then 404.
 */
export const consoleFilesMiddleware = (): Middleware<AppState> => async (ctx, next) => {
  if (ctx.path !== '/console' && !ctx.path.startsWith('/console/')) return next();
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
  if (ctx.path === '/console') {
    ctx.redirect(`/console/${ctx.querystring ? `?${ctx.querystring}` : ''}`);
    return;
  }
  const file = consoleFiles().get(ctx.path.slice('/console/'.length) || 'index.html');
  if (!file) return next();
  ctx.set('Cache-Control', 'no-cache');
  ctx.set('ETag', file.etag);
  ctx.set('Content-Security-Policy', CONSOLE_CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
  if (ctx.get('If-None-Match') === file.etag) {
    ctx.status = 304;
    return;
  }
  ctx.status = 200;
  ctx.type = file.type;
  ctx.body = file.body;
};
