import type { Context } from 'koa';
import { CONSOLE_CSP } from './consoleFiles.ts';
import { errorHeaderValue } from './errors.ts';

/**
 * What a browser gets for a URL the service does not serve. Rucio's clients never ask for HTML
 * (they accept JSON, NDJSON or anything), so they keep Rucio's error format; a person who types
 * the server's address, or follows a stale link, gets a page that says what happened and where to
 * go: the service's root leads to the web console, any other unknown path is a 404 page (status,
 * `ExceptionClass` and `ExceptionMessage` as in the error format, so tools still read them).
 */
export const wantsHtml = (ctx: Context): boolean => {
  // A browser's navigation asks for HTML and XHTML (Chrome, Firefox and Safari alike); a tool
  // that merely accepts text/html keeps the error format.
  const accept = ctx.get('Accept');
  return /\btext\/html\b/.test(accept) && /\bapplication\/xhtml\+xml\b/.test(accept);
};

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

/** Answers a browser's unknown URL; false when the request is not a browser's. */
export const answerBrowserNotFound = (ctx: Context): boolean => {
  if (!wantsHtml(ctx) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return false;
  if (ctx.path === '/') {
    ctx.redirect('/console/');
    return true;
  }
  const message = 'The requested URL was not found on the server.';
  ctx.status = 404;
  ctx.set('ExceptionClass', 'NotFound');
  ctx.set('ExceptionMessage', errorHeaderValue(message));
  ctx.set('Content-Security-Policy', CONSOLE_CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Not found · dms</title>
    <link rel="icon" href="/console/favicon.svg" type="image/svg+xml" />
    <link rel="stylesheet" href="/console/console.css" />
  </head>
  <body>
    <main id="main" class="not-found">
      <p class="eyebrow">404 · NotFound</p>
      <h1>Nothing here</h1>
      <p class="break">The service has no page at <code>${escapeHtml(ctx.path.slice(0, 300))}</code>.</p>
      <p>The web console is at <a href="/console/">/console/</a>; the REST API answers under its own paths (<code>/ping</code>, <code>/dids/…</code>, <code>/rules/…</code>).</p>
    </main>
  </body>
</html>
`;
  return true;
};
