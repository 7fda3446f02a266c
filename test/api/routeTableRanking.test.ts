import Router from '@koa/router';
import { expect } from 'chai';
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { RouteTable } from '../../api/route.ts';
import type { AppState, Services } from '../../api/services.ts';
import { request } from '../support/http.ts';

/** Rucio's rules that overlap, each answering with its own method and path. */
const ROUTES: readonly (readonly [method: 'get' | 'post', path: string])[] = [
  ['get', '/dids/new'],
  ['get', '/dids/:scope/dids/search'],
  ['get', '/dids/:scope'],
  ['get', '/dids/:scope/'],
  ['get', '/dids/*scope_name/dids/history'],
  ['get', '/dids/*scope_name/dids'],
  ['get', '/dids/*scope_name/status'],
  ['get', '/dids/*scope_name'],
  ['post', '/dids/:input_scope/:input_name/:output_scope/:output_name/:nbfiles/sample'],
  ['post', '/dids/*scope_name/meta/:key'],
  ['post', '/dids/*scope_name/meta'],
  ['post', '/dids/*scope_name/follow'],
  ['get', '/rules/'],
  ['get', '/rules/:rule_id/locks'],
  ['get', '/rules/*scope_name/history'],
  ['get', '/rules/:rule_id'],
  ['get', '/requests/history/list'],
  ['get', '/requests/history/*scope_name/:rse'],
  ['get', '/requests/*scope_name/:rse'],
  ['get', '/locks/:rse'],
  ['get', '/locks/*scope_name'],
];

/** The route Werkzeug picks for each request (checked against werkzeug 3.1's matcher). */
const EXPECTED: readonly (readonly [request: string, route: string])[] = [
  // A static word before a variable.
  ['GET /dids/new', 'GET /dids/new'],
  ['GET /rules/', 'GET /rules/'],
  ['GET /requests/history/list', 'GET /requests/history/list'],
  // A variable before a bare `*path`; the greedy path takes what has more segments.
  ['GET /dids/user', 'GET /dids/:scope'],
  ['GET /dids/user/', 'GET /dids/:scope/'],
  ['GET /locks/MOCK', 'GET /locks/:rse'],
  ['GET /locks/user/file', 'GET /locks/*scope_name'],
  ['GET /dids/user/file', 'GET /dids/*scope_name'],
  // A `*path` with a suffix before a bare `*path`, the more words in the suffix first.
  ['GET /dids/user/file/dids', 'GET /dids/*scope_name/dids'],
  ['GET /dids/user/dids/history', 'GET /dids/*scope_name/dids/history'],
  ['GET /dids/user/status', 'GET /dids/*scope_name/status'],
  ['GET /dids/user/dids/search', 'GET /dids/:scope/dids/search'],
  // `<path:scope_name>/history` shadows the intended `<rule_id>/history`.
  ['GET /rules/user/file/history', 'GET /rules/*scope_name/history'],
  ['GET /rules/abc/locks', 'GET /rules/:rule_id/locks'],
  ['GET /rules/abc', 'GET /rules/:rule_id'],
  ['GET /requests/history/user/file/MOCK', 'GET /requests/history/*scope_name/:rse'],
  ['GET /requests/user/file/MOCK', 'GET /requests/*scope_name/:rse'],
  // Werkzeug tries a `*path` part with a static word before a plain variable...
  ['POST /dids/a/b/c/d/meta/sample', 'POST /dids/*scope_name/meta/:key'],
  ['POST /dids/a/b/c/d/5/sample', 'POST /dids/:input_scope/:input_name/:output_scope/:output_name/:nbfiles/sample'],
  // ...and, between two such parts, the one with the longer word first.
  ['POST /dids/user/meta/follow', 'POST /dids/*scope_name/follow'],
  ['POST /dids/user/meta/key', 'POST /dids/*scope_name/meta/:key'],
  ['POST /dids/user/file/meta', 'POST /dids/*scope_name/meta'],
];

/** A fixed shuffle, so a failure reproduces. */
const shuffled = <T>(items: readonly T[]): T[] => {
  const copy = [...items];
  let seed = 42;
  for (let index = copy.length - 1; index > 0; index--) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const other = seed % (index + 1);
    [copy[index], copy[other]] = [copy[other]!, copy[index]!];
  }
  return copy;
};

const serve = async (
  routes: readonly (readonly ['get' | 'post', string])[],
): Promise<{ url: string; server: Server }> => {
  const table = new RouteTable({} as Services);
  for (const [method, path] of routes) {
    table[method](path, { auth: false, commonHeaders: false }, (ctx) => {
      ctx.body = `${method.toUpperCase()} ${path}`;
    });
  }
  const router = new Router<AppState>({ strict: true });
  table.install(router);
  const app = new Koa<AppState>();
  app.use(router.routes());
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
};

describe('API: the route table ranks routes as Werkzeug does', () => {
  for (const [order, routes] of [
    ['in Rucio order', ROUTES],
    ['in reverse order', [...ROUTES].reverse()],
    ['in shuffled order', shuffled(ROUTES)],
  ] as const) {
    describe(`When the routes are registered ${order}`, () => {
      let url: string;
      let server: Server;
      before(async () => ({ url, server } = await serve(routes)));
      after(() => server.close());

      it('should answer every request with the route Werkzeug picks', async () => {
        const answered: string[] = [];
        for (const [line] of EXPECTED) {
          const [method, path] = line.split(' ') as [string, string];
          answered.push((await request(url, method, path)).text);
        }
        expect(answered).to.deep.equal(EXPECTED.map(([, route]) => route));
      });
    });
  }

  it('should refuse a route registered after the table was installed', () => {
    const table = new RouteTable({} as Services);
    table.install(new Router<AppState>());
    expect(() => table.get('/late', {}, () => {})).to.throw(/after the route table was installed/);
  });

  it('should refuse path syntax the ranking does not know', () => {
    expect(() => new RouteTable({} as Services).get('/files{/:name}', {}, () => {})).to.throw(/does not cover/);
  });
});
