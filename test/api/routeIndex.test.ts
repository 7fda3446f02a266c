import Router from '@koa/router';
import { expect } from 'chai';
import { routeTable } from '../../api/app.ts';
import { indexRouteMatching } from '../../api/routeIndex.ts';
import type { AppState } from '../../api/services.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS'];

/** Paths every route answers, in several spellings, and some that no route answers. */
const pathsOf = (router: Router<AppState>): string[] => {
  const paths = new Set<string>(['/', '//', '/nowhere', '/nowhere/at/all', '/PING', '/Dids/a/b', '/dids%25/x']);
  for (const layer of router.stack) {
    const pattern = String(layer.path);
    const one = pattern.replace(/:\w+/g, 'x1').replace(/\*\w+/g, 'scope/name');
    const deep = pattern.replace(/:\w+/g, 'y.2').replace(/\*\w+/g, 'a/b/c');
    for (const path of [one, deep, `${one}/`, one.toUpperCase(), `${one}/extra`]) paths.add(path);
  }
  return [...paths];
};

describe('the route index', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(() => server.stop());

  it("matches every path and method to the same routes, in the same order, as the router's own matching", () => {
    const router = new Router<AppState>({ strict: true });
    routeTable(server.runtime.services).install(router);
    const original = router.match.bind(router);
    const paths = pathsOf(router);
    indexRouteMatching(router);
    expect(router.match).not.to.equal(original);
    for (const path of paths)
      for (const method of METHODS) {
        const expected = original(path, method);
        const actual = router.match(path, method);
        expect(actual.path, `${method} ${path}`).to.deep.equal(expected.path);
        expect(actual.pathAndMethod, `${method} ${path}`).to.deep.equal(expected.pathAndMethod);
        expect(actual.route, `${method} ${path}`).to.equal(expected.route);
      }
  });
});
