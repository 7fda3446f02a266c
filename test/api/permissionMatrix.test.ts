import { expect } from 'chai';
import { routeTable } from '../../api/app.ts';
import { uniqueName } from '../support/events.ts';
import { expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { localLimitOverHttp } from '../support/rules.ts';
import { protocol, rseWithProtocols } from './replicaSupport.ts';

/**
 * Issue 14: every write route of the table against every kind of caller, with the status
 * behaviour-reference §9 (Rucio's generic permission policy) gives each. A row prepares what its
 * request needs (as root) for each caller afresh, so a refusal is about the caller and a success
 * changes something real. A write route without a row fails the test: new routes get a row.
 *
 * Callers: no token (400 "Token must be set: send the X-Svc-Auth-Token header." on every authenticated route), a plain account, the
 * owner of the scope the request touches, an account with the `admin` attribute, and root.
 */
type Who = 'anonymous' | 'user' | 'owner' | 'admin' | 'root';
const CALLERS: readonly Who[] = ['anonymous', 'user', 'owner', 'admin', 'root'];

type Request = Readonly<{ path: string; body?: unknown; headers?: Record<string, string> }>;

type World = Readonly<{
  server: TestServer;
  tokens: Readonly<Record<Exclude<Who, 'anonymous'>, string>>;
  accounts: Readonly<Record<Exclude<Who, 'anonymous' | 'root'>, string>>;
  /** Owned by `owner`. */
  scope: string;
  /** A dataset of `scope` with one file, replicated on `rse`. */
  dataset: string;
  file: string;
  rse: string;
  otherRse: string;
}>;

type Row = Readonly<{
  /** `METHOD /pattern` as the route table names it; several when variants share one handler. */
  routes: readonly string[];
  /** Statuses for anonymous, user, owner, admin, root. */
  expect: readonly [number, number, number, number, number];
  /** Builds the request for one caller, creating (as root) what it needs first. */
  request: (world: World, who: Who, path: string) => Promise<Request> | Request;
}>;

/** Root does the preparing. */
const asRoot = async (world: World, method: string, path: string, body?: unknown, expected?: number) => {
  const response = await world.server.root(method, path, body === undefined ? {} : { body });
  if (expected !== undefined) expectStatus(response, expected);
  return response;
};
const freshAccount = async (world: World): Promise<string> => {
  const account = uniqueName('perm');
  await asRoot(world, 'POST', `/accounts/${account}`, { type: 'USER', email: 'p@example.org' }, 201);
  return account;
};
/** Each RSE's protocol has a host of its own, so a PFN names one RSE. */
const hostOf = (rse: string) => `${rse.toLowerCase().replaceAll('_', '-')}.example.org`;
const freshRse = async (world: World, withProtocol = false): Promise<string> => {
  const rse = uniqueName('PERM_').toUpperCase();
  await asRoot(world, 'POST', `/rses/${rse}`, {}, 201);
  if (withProtocol) await asRoot(world, 'POST', `/rses/${rse}/protocols/root`, protocol('root', hostOf(rse)), 201);
  return rse;
};
/** A new dataset of the owner's scope, as root. */
const freshDataset = async (world: World): Promise<string> => {
  const name = uniqueName('ds');
  await asRoot(world, 'POST', `/dids/${world.scope}/${name}`, { type: 'DATASET' }, 201);
  return name;
};
/** A new file of the owner's scope with a replica on the RSE (and on the other one when asked), as root. */
const freshFile = async (world: World, onBoth = false): Promise<string> => {
  const name = uniqueName('file');
  for (const rse of onBoth ? [world.rse, world.otherRse] : [world.rse]) {
    await asRoot(
      world,
      'POST',
      '/replicas',
      { rse, files: [{ scope: world.scope, name, bytes: 1, adler32: '0cc737eb' }] },
      201,
    );
  }
  return name;
};
/** A rule of root's on a new dataset, OK at once (its file is where the rule wants it). */
const freshRule = async (world: World, copies = 1): Promise<string> => {
  const dataset = await freshDataset(world);
  await asRoot(
    world,
    'POST',
    `/dids/${world.scope}/${dataset}/dids`,
    { dids: [{ scope: world.scope, name: await freshFile(world, copies > 1) }] },
    201,
  );
  const expression = copies === 1 ? world.rse : `${world.rse}|${world.otherRse}`;
  const response = await asRoot(
    world,
    'POST',
    '/rules/',
    { dids: [{ scope: world.scope, name: dataset }], copies, rse_expression: expression },
    201,
  );
  return (JSON.parse(response.text) as string[])[0]!;
};
const didPath = (world: World, name: string, suffix = '') => `/dids/${world.scope}/${name}${suffix}`;
/** A subscription's options: the owner scope's datasets get a copy on the RSE. */
const subscriptionBody = (world: World) => ({
  options: {
    filter: { scope: [world.scope] },
    replication_rules: [{ copies: 1, rse_expression: world.rse }],
    comments: 'perm',
    lifetime: null,
    retroactive: false,
  },
});
/** A new dataset of the owner's scope whose end of life is past: a lifetime exception affects it. */
const datasetPastItsEnd = async (world: World): Promise<string> => {
  const name = uniqueName('ds');
  await asRoot(world, 'POST', `/dids/${world.scope}/${name}`, { type: 'DATASET', meta: { eol_at: '2020-01-01' } }, 201);
  return name;
};

/** A dataset of the owner's scope in the open data catalogue (a DRAFT), as root; its entry's path. */
const freshOpenDataEntry = async (world: World): Promise<string> => {
  const path = `/opendata/dids/${world.scope}/${await freshDataset(world)}`;
  await asRoot(world, 'POST', path, undefined, 201);
  return path;
};

/** The path pattern with its variables replaced. */
const fill = (pattern: string, values: Record<string, string>) =>
  pattern.replace(/[:*]([a-z_]+)/g, (_, name: string) => values[name] ?? `missing-${name}`);

// Statuses, named for reading: R (refused, 401 AccessDenied), T (no token, 400), and the successes.
const T = 400;
const R = 401;
const ROOT_ONLY = (ok: number) => [T, R, R, R, ok] as const;
const ADMIN = (ok: number) => [T, R, R, ok, ok] as const;
const OWNER = (ok: number) => [T, R, ok, ok, ok] as const;
const ANYONE = (ok: number) => [T, ok, ok, ok, ok] as const;

const ROWS: readonly Row[] = [
  // Accounts, identities, scopes (§9: add/del account root; the rest admin).
  {
    routes: ['POST /accounts/:account'],
    expect: ROOT_ONLY(201),
    request: () => ({ path: `/accounts/${uniqueName('new')}`, body: { type: 'USER', email: 'n@example.org' } }),
  },
  {
    routes: ['PUT /accounts/:account'],
    expect: ADMIN(200),
    request: async (w) => ({ path: `/accounts/${await freshAccount(w)}`, body: { email: 'changed@example.org' } }),
  },
  {
    routes: ['DELETE /accounts/:account'],
    expect: ROOT_ONLY(200),
    request: async (w) => ({ path: `/accounts/${await freshAccount(w)}` }),
  },
  {
    routes: ['POST /accounts/:account/attr/:key'],
    expect: ADMIN(201),
    request: async (w) => ({ path: `/accounts/${await freshAccount(w)}/attr/tier`, body: { value: '1' } }),
  },
  {
    routes: ['DELETE /accounts/:account/attr/:key'],
    expect: ADMIN(200),
    request: async (w) => {
      const account = await freshAccount(w);
      await asRoot(w, 'POST', `/accounts/${account}/attr/tier`, { value: '1' }, 201);
      return { path: `/accounts/${account}/attr/tier` };
    },
  },
  {
    routes: ['POST /accounts/:account/identities'],
    expect: ADMIN(201),
    request: async (w) => ({
      path: `/accounts/${await freshAccount(w)}/identities`,
      body: { identity: uniqueName('id'), authtype: 'USERPASS', email: 'i@example.org', password: 'pw' },
    }),
  },
  {
    routes: ['DELETE /accounts/:account/identities'],
    expect: ADMIN(200),
    request: async (w) => {
      const account = await freshAccount(w);
      const identity = uniqueName('id');
      await asRoot(
        w,
        'POST',
        `/accounts/${account}/identities`,
        { identity, authtype: 'USERPASS', email: 'i@example.org', password: 'pw' },
        201,
      );
      return { path: `/accounts/${account}/identities`, body: { identity, authtype: 'USERPASS' } };
    },
  },
  {
    routes: ['POST /accounts/:account/scopes/:scope'],
    expect: ADMIN(201),
    request: async (w) => ({ path: `/accounts/${await freshAccount(w)}/scopes/${uniqueName('s.')}` }),
  },
  {
    routes: ['POST /scopes/:account/:scope'],
    expect: ADMIN(201),
    request: async (w) => ({ path: `/scopes/${await freshAccount(w)}/${uniqueName('s.')}` }),
  },
  {
    routes: ['PUT /identities/:account/userpass'],
    expect: ADMIN(201),
    request: async (w) => ({
      path: `/identities/${await freshAccount(w)}/userpass`,
      headers: { 'X-Svc-Username': uniqueName('login'), 'X-Svc-Password': 'pw', 'X-Svc-Email': 'u@example.org' },
    }),
  },
  {
    routes: ['PUT /identities/:account/x509'],
    expect: ADMIN(201),
    request: async (w) => ({
      path: `/identities/${await freshAccount(w)}/x509`,
      headers: { 'X-Test-DN': `/CN=${uniqueName('dn')}`, 'X-Svc-Email': 'x@example.org' },
    }),
  },
  {
    routes: ['PUT /identities/:account/gss'],
    expect: ADMIN(201),
    request: async (w) => ({
      path: `/identities/${await freshAccount(w)}/gss`,
      headers: { 'X-Test-Principal': `${uniqueName('p')}@EXAMPLE.ORG`, 'X-Svc-Email': 'g@example.org' },
    }),
  },
  // Our own route: an account's sessions are ended by admins.
  {
    routes: ['DELETE /admin/accounts/:account/tokens'],
    expect: ADMIN(200),
    request: async (w) => ({ path: `/admin/accounts/${await freshAccount(w)}/tokens` }),
  },
  // Our own route (issue 15, the audits): rebuilding a projection is root's; an unknown name is 404 once allowed.
  {
    routes: ['POST /admin/projections/:name/rebuild'],
    expect: ROOT_ONLY(404),
    request: () => ({ path: '/admin/projections/no_such_projection/rebuild' }),
  },

  // Our own route (issue 24, the console): verifying the hash chains reads the whole log, for admins.
  {
    routes: ['POST /audit/verify'],
    expect: ADMIN(200),
    request: () => ({ path: '/audit/verify' }),
  },

  // Configuration (§9: config get/set admin).
  {
    routes: ['POST /config'],
    expect: ADMIN(201),
    request: () => ({ path: '/config', body: { [uniqueName('section')]: { option: 'value' } } }),
  },
  {
    routes: ['PUT /config/:section/:option/:value'],
    expect: ADMIN(201),
    request: () => ({ path: `/config/${uniqueName('section')}/option/value` }),
  },
  {
    routes: ['DELETE /config/:section'],
    expect: ADMIN(200),
    request: async (w) => {
      const section = uniqueName('section');
      await asRoot(w, 'PUT', `/config/${section}/option/value`, undefined, 201);
      return { path: `/config/${section}` };
    },
  },
  {
    routes: ['DELETE /config/:section/:option'],
    expect: ADMIN(200),
    request: async (w) => {
      const section = uniqueName('section');
      await asRoot(w, 'PUT', `/config/${section}/option/value`, undefined, 201);
      return { path: `/config/${section}/option` };
    },
  },

  // RSEs (§9: admin; set_rse_usage root only).
  {
    routes: ['POST /rses/:rse'],
    expect: ADMIN(201),
    request: () => ({ path: `/rses/${uniqueName('NEW_').toUpperCase()}`, body: {} }),
  },
  {
    routes: ['PUT /rses/:rse'],
    expect: ADMIN(201),
    request: async (w) => ({ path: `/rses/${await freshRse(w)}`, body: { city: 'Bern' } }),
  },
  { routes: ['DELETE /rses/:rse'], expect: ADMIN(200), request: async (w) => ({ path: `/rses/${await freshRse(w)}` }) },
  {
    routes: ['POST /rses/:rse/attr/:key'],
    expect: ADMIN(201),
    request: async (w) => ({ path: `/rses/${await freshRse(w)}/attr/tier`, body: { value: '2' } }),
  },
  {
    routes: ['DELETE /rses/:rse/attr/:key'],
    expect: ADMIN(200),
    request: async (w) => {
      const rse = await freshRse(w);
      await asRoot(w, 'POST', `/rses/${rse}/attr/tier`, { value: '2' }, 201);
      return { path: `/rses/${rse}/attr/tier` };
    },
  },
  {
    routes: ['POST /rses/:rse/protocols/:scheme'],
    expect: ADMIN(201),
    request: async (w) => {
      const rse = await freshRse(w);
      return { path: `/rses/${rse}/protocols/root`, body: protocol('root', hostOf(rse)) };
    },
  },
  {
    routes: [
      'PUT /rses/:rse/protocols/:scheme',
      'PUT /rses/:rse/protocols/:scheme/:hostname',
      'PUT /rses/:rse/protocols/:scheme/:hostname/:port',
    ],
    expect: ADMIN(200),
    request: async (w, _who, pattern) => {
      const rse = await freshRse(w, true);
      return {
        path: fill(pattern, { rse, scheme: 'root', hostname: hostOf(rse), port: '1094' }),
        body: { prefix: '/other' },
      };
    },
  },
  {
    routes: [
      'DELETE /rses/:rse/protocols/:scheme',
      'DELETE /rses/:rse/protocols/:scheme/:hostname',
      'DELETE /rses/:rse/protocols/:scheme/:hostname/:port',
    ],
    expect: ADMIN(200),
    request: async (w, _who, pattern) => {
      const rse = await freshRse(w, true);
      return { path: fill(pattern, { rse, scheme: 'root', hostname: hostOf(rse), port: '1094' }) };
    },
  },
  {
    routes: ['PUT /rses/:rse/usage'],
    expect: ROOT_ONLY(200),
    request: async (w) => ({ path: `/rses/${await freshRse(w)}/usage`, body: { source: 'storage', used: 1, free: 2 } }),
  },
  {
    routes: ['PUT /rses/:rse/limits'],
    expect: ADMIN(200),
    request: async (w) => ({ path: `/rses/${await freshRse(w)}/limits`, body: { name: 'MinFreeSpace', value: 10 } }),
  },
  {
    routes: ['DELETE /rses/:rse/limits'],
    expect: ADMIN(200),
    request: async (w) => {
      const rse = await freshRse(w);
      await asRoot(w, 'PUT', `/rses/${rse}/limits`, { name: 'MinFreeSpace', value: 10 }, 200);
      return { path: `/rses/${rse}/limits`, body: { name: 'MinFreeSpace' } };
    },
  },
  {
    routes: ['POST /rses/:rse/qos_policy/:policy'],
    expect: ADMIN(201),
    request: async (w) => ({ path: `/rses/${await freshRse(w)}/qos_policy/FAST` }),
  },
  {
    routes: ['DELETE /rses/:rse/qos_policy/:policy'],
    expect: ADMIN(200),
    request: async (w) => {
      const rse = await freshRse(w);
      await asRoot(w, 'POST', `/rses/${rse}/qos_policy/FAST`, undefined, 201);
      return { path: `/rses/${rse}/qos_policy/FAST` };
    },
  },
  {
    routes: ['POST /rses/:source/distances/:destination'],
    expect: ADMIN(201),
    request: async (w) => ({ path: `/rses/${await freshRse(w)}/distances/${w.rse}`, body: { distance: 1 } }),
  },
  {
    routes: ['PUT /rses/:source/distances/:destination', 'DELETE /rses/:source/distances/:destination'],
    expect: ADMIN(200),
    request: async (w) => {
      const source = await freshRse(w);
      await asRoot(w, 'POST', `/rses/${source}/distances/${w.rse}`, { distance: 1 }, 201);
      return { path: `/rses/${source}/distances/${w.rse}`, body: { distance: 2 } };
    },
  },
  // Import: no action of its own in §9, so the default (admin).
  {
    routes: ['POST /import', 'POST /import/'],
    expect: ADMIN(201),
    request: (_w, _who, pattern) => ({
      path: pattern,
      body: { rses: { [uniqueName('IMP_').toUpperCase()]: { rse_type: 'DISK' } } },
    }),
  },

  // Account limits (§9: admin, or a country admin of the RSE).
  {
    routes: ['POST /accountlimits/:account/:rse', 'POST /accountlimits/local/:account/:rse'],
    expect: ADMIN(201),
    request: async (w, _who, pattern) => ({
      path: fill(pattern, { account: await freshAccount(w), rse: w.rse }),
      body: { bytes: 100 },
    }),
  },
  {
    routes: ['DELETE /accountlimits/:account/:rse', 'DELETE /accountlimits/local/:account/:rse'],
    expect: ADMIN(200),
    request: async (w, _who, pattern) => {
      const account = await freshAccount(w);
      await asRoot(w, 'POST', `/accountlimits/local/${account}/${w.rse}`, { bytes: 100 }, 201);
      return { path: fill(pattern, { account, rse: w.rse }) };
    },
  },
  {
    routes: ['POST /accountlimits/global/:account/:rse_expression'],
    expect: ADMIN(201),
    request: async (w) => ({ path: `/accountlimits/global/${await freshAccount(w)}/${w.rse}`, body: { bytes: 100 } }),
  },
  {
    routes: ['DELETE /accountlimits/global/:account/:rse_expression'],
    expect: ADMIN(200),
    request: async (w) => {
      const account = await freshAccount(w);
      await asRoot(w, 'POST', `/accountlimits/global/${account}/${w.rse}`, { bytes: 100 }, 201);
      return { path: `/accountlimits/global/${account}/${w.rse}` };
    },
  },

  // DIDs (§9: admin, scope owner, or scope `mock`).
  {
    routes: ['POST /dids'],
    expect: OWNER(201),
    request: (w) => ({ path: '/dids', body: [{ scope: w.scope, name: uniqueName('ds'), type: 'DATASET' }] }),
  },
  {
    routes: ['POST /dids/*scope_name'],
    expect: OWNER(201),
    request: (w) => ({ path: didPath(w, uniqueName('ds')), body: { type: 'DATASET' } }),
  },
  {
    routes: ['POST /dids/*scope_name/dids'],
    expect: OWNER(201),
    request: async (w) => ({
      path: didPath(w, await freshDataset(w), '/dids'),
      body: { dids: [{ scope: w.scope, name: await freshFile(w) }] },
    }),
  },
  {
    routes: ['DELETE /dids/*scope_name/dids'],
    expect: OWNER(200),
    request: async (w) => {
      const dataset = await freshDataset(w);
      const file = await freshFile(w);
      await asRoot(w, 'POST', didPath(w, dataset, '/dids'), { dids: [{ scope: w.scope, name: file }] }, 201);
      return { path: didPath(w, dataset, '/dids'), body: { dids: [{ scope: w.scope, name: file }] } };
    },
  },
  {
    routes: ['POST /dids/attachments'],
    expect: OWNER(201),
    request: async (w) => ({
      path: '/dids/attachments',
      body: {
        attachments: [
          { scope: w.scope, name: await freshDataset(w), dids: [{ scope: w.scope, name: await freshFile(w) }] },
        ],
      },
    }),
  },
  {
    routes: ['PUT /dids/*scope_name/status'],
    expect: OWNER(200),
    request: async (w) => ({ path: didPath(w, await freshDataset(w), '/status'), body: { open: false } }),
  },
  {
    routes: ['POST /dids/*scope_name/meta'],
    expect: OWNER(201),
    request: (w) => ({ path: didPath(w, w.dataset, '/meta'), body: { meta: { project: 'perm' } } }),
  },
  {
    routes: ['POST /dids/*scope_name/meta/:key'],
    expect: OWNER(201),
    request: (w) => ({ path: didPath(w, w.dataset, '/meta/colour'), body: { value: 'blue' } }),
  },
  {
    routes: ['DELETE /dids/*scope_name/meta'],
    expect: OWNER(200),
    request: async (w) => {
      const dataset = await freshDataset(w);
      await asRoot(w, 'POST', didPath(w, dataset, '/meta/colour'), { value: 'blue' }, 201);
      return { path: didPath(w, dataset, '/meta?key=colour') };
    },
  },
  {
    routes: ['POST /dids/bulkdidsmeta'],
    expect: OWNER(201),
    request: (w) => ({
      path: '/dids/bulkdidsmeta',
      body: { dids: [{ scope: w.scope, name: w.dataset, meta: { colour: 'red' } }] },
    }),
  },
  // Following for the scope owner: allowed to the owner himself and admins (§9 remove_did_from_followed).
  {
    routes: ['POST /dids/*scope_name/follow'],
    expect: OWNER(201),
    request: async (w) => ({ path: didPath(w, await freshDataset(w), '/follow'), body: { account: w.accounts.owner } }),
  },
  {
    routes: ['DELETE /dids/*scope_name/follow'],
    expect: OWNER(200),
    request: async (w) => {
      const dataset = await freshDataset(w);
      await asRoot(w, 'POST', didPath(w, dataset, '/follow'), { account: w.accounts.owner }, 201);
      return { path: didPath(w, dataset, '/follow'), body: { account: w.accounts.owner } };
    },
  },
  {
    routes: ['POST /dids/sample'],
    expect: OWNER(201),
    request: (w) => ({
      path: '/dids/sample',
      body: {
        input_scope: w.scope,
        input_name: w.dataset,
        output_scope: w.scope,
        output_name: uniqueName('sample'),
        nbfiles: 1,
      },
    }),
  },
  {
    routes: ['POST /dids/:input_scope/:input_name/:output_scope/:output_name/:nbfiles/sample'],
    expect: OWNER(201),
    request: (w) => ({ path: `/dids/${w.scope}/${w.dataset}/${w.scope}/${uniqueName('sample')}/1/sample` }),
  },
  // Resurrect is admin's; a live DID is no deleted one, which admins learn once allowed.
  {
    routes: ['POST /dids/resurrect'],
    expect: [T, R, R, 404, 404],
    request: (w) => ({ path: '/dids/resurrect', body: [{ scope: w.scope, name: w.dataset }] }),
  },

  // Reads sent as POST: no permission beyond a valid token.
  {
    routes: ['POST /dids/bulkfiles'],
    expect: ANYONE(200),
    request: (w) => ({ path: '/dids/bulkfiles', body: { dids: [{ scope: w.scope, name: w.dataset }] } }),
  },
  {
    routes: ['POST /dids/bulkmeta'],
    expect: ANYONE(200),
    request: (w) => ({ path: '/dids/bulkmeta', body: { dids: [{ scope: w.scope, name: w.dataset }] } }),
  },
  {
    routes: ['POST /replicas/list', 'POST /replicas/list/'],
    expect: ANYONE(200),
    request: (w, _who, pattern) => ({ path: pattern, body: { dids: [{ scope: w.scope, name: w.dataset }] } }),
  },
  {
    routes: ['POST /replicas/datasets_bulk', 'POST /replicas/datasets_bulk/'],
    expect: ANYONE(200),
    request: (w, _who, pattern) => ({ path: pattern, body: { dids: [{ scope: w.scope, name: w.dataset }] } }),
  },
  {
    routes: ['POST /replicas/dids', 'POST /replicas/dids/'],
    expect: ANYONE(200),
    request: (w, _who, pattern) => ({
      path: pattern,
      body: { pfns: ['root://xrd.example.org:1094/data/nothing'], rse: w.rse },
    }),
  },
  {
    routes: ['POST /locks/bulk_locks_for_dids'],
    expect: ANYONE(200),
    request: (w) => ({ path: '/locks/bulk_locks_for_dids', body: { dids: [{ scope: w.scope, name: w.dataset }] } }),
  },

  // Replicas (§9: add_replicas admin on this RSE; update states admin; delete nobody; bad root; suspicious anyone).
  {
    routes: ['POST /replicas', 'POST /replicas/'],
    expect: ADMIN(201),
    request: (w, _who, pattern) => ({
      path: pattern,
      body: { rse: w.rse, files: [{ scope: w.scope, name: uniqueName('file'), bytes: 1, adler32: '0cc737eb' }] },
    }),
  },
  {
    routes: ['PUT /replicas', 'PUT /replicas/'],
    expect: ADMIN(200),
    request: async (w, _who, pattern) => ({
      path: pattern,
      body: { rse: w.rse, files: [{ scope: w.scope, name: await freshFile(w), state: 'U' }] },
    }),
  },
  {
    routes: ['DELETE /replicas', 'DELETE /replicas/'],
    expect: [T, R, R, R, R],
    request: async (w, _who, pattern) => ({
      path: pattern,
      body: { rse: w.rse, files: [{ scope: w.scope, name: await freshFile(w) }] },
    }),
  },
  {
    routes: ['POST /replicas/bad/dids', 'POST /replicas/bad/dids/'],
    expect: ROOT_ONLY(201),
    request: async (w, _who, pattern) => ({
      path: pattern,
      body: { rse: w.rse, dids: [{ scope: w.scope, name: await freshFile(w) }], reason: 'perm' },
    }),
  },
  {
    routes: ['POST /replicas/bad/pfns', 'POST /replicas/bad/pfns/', 'POST /replicas/bad', 'POST /replicas/bad/'],
    expect: ROOT_ONLY(201),
    request: async (w, _who, pattern) => {
      const file = await freshFile(w);
      const pfn = (await asRoot(w, 'POST', '/replicas/list', { dids: [{ scope: w.scope, name: file }] }, 200)).lines<{
        pfns: Record<string, unknown>;
      }>()[0]!;
      const body: Record<string, unknown> = { pfns: Object.keys(pfn.pfns), reason: 'perm' };
      if (pattern.includes('pfns')) Object.assign(body, { state: 'BAD', expires_at: null });
      return { path: pattern, body };
    },
  },
  {
    routes: ['POST /replicas/suspicious', 'POST /replicas/suspicious/'],
    expect: ANYONE(201),
    request: async (w, _who, pattern) => {
      const file = await freshFile(w);
      const pfn = (await asRoot(w, 'POST', '/replicas/list', { dids: [{ scope: w.scope, name: file }] }, 200)).lines<{
        pfns: Record<string, unknown>;
      }>()[0]!;
      return { path: pattern, body: { pfns: Object.keys(pfn.pfns), reason: 'perm' } };
    },
  },
  {
    routes: ['POST /replicas/tombstone', 'POST /replicas/tombstone/'],
    expect: ADMIN(201),
    request: async (w, _who, pattern) => ({
      path: pattern,
      body: { replicas: [{ rse: w.rse, scope: w.scope, name: await freshFile(w) }] },
    }),
  },
  // Quarantine: admins; the one route where Rucio answers AccessDenied with 403.
  {
    routes: ['POST /replicas/quarantine', 'POST /replicas/quarantine/'],
    expect: [T, 403, 403, 200, 200],
    request: (w, _who, pattern) => ({
      path: pattern,
      body: { rse: w.rse, replicas: [{ path: `/data/${uniqueName('dark')}` }] },
    }),
  },

  // Rules (§9: add_rule anyone for an unlocked rule of his own; the rest admin).
  {
    routes: ['POST /rules/'],
    expect: ANYONE(201),
    request: async (w) => ({
      path: '/rules/',
      body: { dids: [{ scope: w.scope, name: await freshDataset(w) }], copies: 1, rse_expression: w.rse },
    }),
  },
  {
    routes: ['PUT /rules/:rule_id'],
    expect: ADMIN(200),
    request: async (w) => ({ path: `/rules/${await freshRule(w)}`, body: { options: { comment: 'changed' } } }),
  },
  {
    routes: ['DELETE /rules/:rule_id'],
    expect: ADMIN(200),
    request: async (w) => ({ path: `/rules/${await freshRule(w)}`, body: {} }),
  },
  {
    routes: ['POST /rules/:rule_id/reduce'],
    expect: ADMIN(201),
    request: async (w) => ({ path: `/rules/${await freshRule(w, 2)}/reduce`, body: { copies: 1 } }),
  },
  {
    routes: ['POST /rules/:rule_id/move'],
    expect: ADMIN(201),
    request: async (w) => ({ path: `/rules/${await freshRule(w)}/move`, body: { rse_expression: w.otherRse } }),
  },

  // Subscriptions (§9: add_subscription and update_subscription are admins').
  {
    routes: ['POST /subscriptions/:account/:name'],
    expect: ADMIN(201),
    request: (w) => ({ path: `/subscriptions/${w.accounts.user}/${uniqueName('sub')}`, body: subscriptionBody(w) }),
  },
  {
    routes: ['PUT /subscriptions/:account/:name'],
    expect: ADMIN(201),
    request: async (w) => {
      const name = uniqueName('sub');
      await asRoot(w, 'POST', `/subscriptions/root/${name}`, subscriptionBody(w), 201);
      return { path: `/subscriptions/root/${name}`, body: { options: { comments: 'changed' } } };
    },
  },
  // Lifetime exceptions (§9: anyone asks; update_lifetime_exceptions is admins').
  {
    routes: ['POST /lifetime_exceptions/'],
    expect: ANYONE(201),
    request: async (w) => ({
      path: '/lifetime_exceptions/',
      body: { dids: [{ scope: w.scope, name: await datasetPastItsEnd(w) }], comments: 'perm' },
    }),
  },
  {
    routes: ['PUT /lifetime_exceptions/:exception_id'],
    expect: ADMIN(201),
    request: async (w) => {
      const answer = await asRoot(
        w,
        'POST',
        '/lifetime_exceptions/',
        { dids: [{ scope: w.scope, name: await datasetPastItsEnd(w) }], comments: 'perm' },
        201,
      );
      return {
        path: `/lifetime_exceptions/${Object.keys(answer.json<{ exceptions: object }>().exceptions)[0]}`,
        body: { state: 'A' },
      };
    },
  },

  // Metadata conventions: no action of their own in §9, so the default (admin).
  {
    routes: ['POST /meta_conventions/:key'],
    expect: ADMIN(201),
    request: () => ({ path: `/meta_conventions/${uniqueName('key')}`, body: { key_type: 'ALL' } }),
  },
  {
    routes: ['POST /meta_conventions/:key/'],
    expect: ADMIN(201),
    request: async (w) => {
      const key = uniqueName('key');
      await asRoot(w, 'POST', `/meta_conventions/${key}`, { key_type: 'ALL' }, 201);
      return { path: `/meta_conventions/${key}/`, body: { value: uniqueName('v') } };
    },
  },

  // Transfer limits (§9: admin).
  {
    routes: ['PUT /requests/transfer_limits'],
    expect: ADMIN(201),
    request: (w) => ({ path: '/requests/transfer_limits', body: { rse_expression: w.rse, max_transfers: 10 } }),
  },
  {
    routes: ['DELETE /requests/transfer_limits'],
    expect: ADMIN(200),
    request: async (w) => {
      const rse = await freshRse(w);
      await asRoot(w, 'PUT', '/requests/transfer_limits', { rse_expression: rse, max_transfers: 10 }, 201);
      return { path: '/requests/transfer_limits', body: { rse_expression: rse } };
    },
  },

  // SAML is not configured: every caller gets Rucio's answer, no token needed.
  { routes: ['POST /auth/saml'], expect: [400, 400, 400, 400, 400], request: () => ({ path: '/auth/saml' }) },
  // Open data (Rucio asks no permission; here admins and the owner of the DID's scope).
  {
    routes: ['POST /opendata/dids/:scope/:name'],
    expect: OWNER(201),
    request: async (w) => ({ path: `/opendata/dids/${w.scope}/${await freshDataset(w)}` }),
  },
  {
    routes: ['PUT /opendata/dids/:scope/:name'],
    expect: OWNER(200),
    request: async (w) => ({ path: await freshOpenDataEntry(w), body: { meta: { title: 'perm' } } }),
  },
  {
    routes: ['DELETE /opendata/dids/:scope/:name'],
    expect: OWNER(204),
    request: async (w) => ({ path: await freshOpenDataEntry(w) }),
  },
  // DIRAC: the files' scope (the owner's) and replicas on an RSE that takes only admins'.
  {
    routes: ['POST /dirac/addfiles', 'POST /dirac/addfiles/'],
    expect: ADMIN(201),
    request: async (w, _who, path) => {
      const vo = `/${w.scope}`;
      await asRoot(w, 'PUT', '/config/common/extract_scope/dirac');
      await asRoot(w, 'POST', `/rses/${w.rse}/attr/ANY`, { value: true });
      await asRoot(w, 'POST', '/dids', [{ scope: w.scope, name: vo, type: 'CONTAINER' }]);
      const lfn = `${vo}/${w.scope}/${uniqueName('dir')}/f`;
      return { path, body: { lfns: [{ lfn, rse: w.rse, bytes: 1, adler32: '0cc737eb' }] } };
    },
  },
  // Heartbeats (§9: the default permission, admins) and traces (no token, as Rucio takes them).
  {
    routes: ['POST /heartbeats'],
    expect: ADMIN(200),
    request: () => ({ path: '/heartbeats', body: { executable: uniqueName('perm'), hostname: 'h', pid: 1 } }),
  },
  {
    routes: ['POST /traces/'],
    expect: [201, 201, 201, 201, 201],
    request: () => ({ path: '/traces/', body: { eventType: 'upload', clientState: 'DONE' } }),
  },
  {
    routes: ['POST /nongrid_traces/'],
    expect: [201, 201, 201, 201, 201],
    request: () => ({ path: '/nongrid_traces/', body: { payload: 'x' } }),
  },
];

describe('API: the permission matrix of every write route', function () {
  this.timeout(120_000);
  let world: World;

  before(async () => {
    const server = await startTestServer({
      environment: { DMS_X509_DN_HEADER: 'X-Test-DN', DMS_GSS_REMOTE_USER_HEADER: 'X-Test-Principal' },
    });
    const user = await server.createUser();
    const owner = await server.createUser();
    const admin = await server.createUser({ admin: true });
    const scope = `user.${owner.account}`;
    expectStatus(await server.root('POST', `/accounts/${owner.account}/scopes/${scope}`), 201);
    // Lifetime exceptions are taken while the cutoff date is ahead.
    expectStatus(
      await server.root('POST', '/config', {
        body: { lifetime_model: { cutoff_date: `${new Date().getUTCFullYear() + 1}-12-31` } },
      }),
      201,
    );
    const { rse } = await rseWithProtocols(server, [{ root: protocol('root', 'first.example.org') }]);
    const { rse: otherRse } = await rseWithProtocols(server, [{ root: protocol('root', 'second.example.org') }]);
    for (const account of [user.account, owner.account, admin.account]) {
      for (const target of [rse, otherRse]) await localLimitOverHttp(server, account, target, 1e12);
    }
    const partial = {
      server,
      tokens: { user: user.token, owner: owner.token, admin: admin.token, root: server.rootToken },
      accounts: { user: user.account, owner: owner.account, admin: admin.account },
      scope,
      rse,
      otherRse,
    };
    const dataset = await freshDataset({ ...partial, dataset: '', file: '' });
    const file = await freshFile({ ...partial, dataset, file: '' });
    expectStatus(
      await server.root('POST', `/dids/${scope}/${dataset}/dids`, { body: { dids: [{ scope, name: file }] } }),
      201,
    );
    world = { ...partial, dataset, file };
  });
  after(async () => world?.server.stop());

  it('has a row for every write route of the route table', () => {
    const covered = new Set(ROWS.flatMap((row) => row.routes));
    const writes = routeTable(world.server.runtime.services)
      .entries()
      .filter((route) => route.method !== 'GET')
      .map((route) => `${route.method} ${route.path}`);
    expect(
      writes.filter((route) => !covered.has(route)),
      'write routes without a row',
    ).to.deep.equal([]);
  });

  it('answers each caller of each write route as §9 says', async () => {
    const known = new Set(
      routeTable(world.server.runtime.services)
        .entries()
        .map((route) => `${route.method} ${route.path}`),
    );
    const mismatches: string[] = [];
    for (const row of ROWS) {
      for (const route of row.routes.filter((name) => known.has(name))) {
        const [method, pattern] = route.split(' ') as [string, string];
        for (const [index, who] of CALLERS.entries()) {
          const request = await row.request(world, who, pattern);
          const token = who === 'anonymous' ? undefined : world.tokens[who];
          const response = await world.server.call(method, request.path, {
            ...(token ? { token } : {}),
            body: request.body,
            headers: request.headers ?? {},
          });
          const expected = row.expect[index]!;
          if (response.status !== expected)
            mismatches.push(
              `${route} as ${who}: expected ${expected}, got ${response.status} ${response.text.slice(0, 160)}`,
            );
        }
      }
    }
    expect(mismatches, mismatches.join('\n')).to.deep.equal([]);
  });
});
