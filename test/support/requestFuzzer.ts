import fc from 'fast-check';
import { gzipSync } from 'node:zlib';
import type { RouteEntry } from '../../api/route.ts';
import { addRuleSchema } from '../../api/routes/rule/ruleParams.ts';

/**
 * Requests generated from the route table for the fuzz test: every route, its path variables
 * filled from pools of names that exist (so requests get past the lookups), of names that do not,
 * and of hostile text; query strings and bodies from the keys the API reads, with values of every
 * type and range, and now and then a body that is not what it says it is.
 */

/** Names that exist on the server under test, and the tokens of its callers. */
export type FuzzWorld = Readonly<{
  accounts: readonly string[];
  /** Accounts no write may name in its path (their tokens are the fuzzer's callers). */
  protectedAccounts: readonly string[];
  scopes: readonly string[];
  dids: readonly Readonly<{ scope: string; name: string }>[];
  rses: readonly string[];
  ruleIds: readonly string[];
  tokens: readonly string[];
  /** Metadata keys with a convention whose pattern backtracks catastrophically (`(a+)+$`). */
  metaKeys: readonly string[];
}>;

export type FuzzRequest = Readonly<{
  method: string;
  route: string;
  path: string;
  headers: Readonly<Record<string, string>>;
  body: string | Buffer | undefined;
}>;

/** Text no name or key should be: empty, too long, control characters, prototype keys, bad escapes. */
const HOSTILE = [
  '',
  ' ',
  '.',
  '..',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'a'.repeat(300),
  'x'.repeat(5000),
  'zz\r\nYY',
  'a\u0000b',
  'tab\there',
  'é',
  '😀',
  '\ud800',
  '*',
  '?',
  '%',
  '#',
  "'",
  '"',
  '\\',
  '<script>',
  '1e309',
  '-1',
  'NaN',
  'true',
  'null',
  'a:b',
  'user.root',
  'mock',
  'A_B',
  '0',
] as const;

/**
 * Regular expressions that take exponential time on a backtracking engine (with the long inputs
 * below), and ones that need backtracking at all: each must be run in linear time or refused.
 */
const CATASTROPHIC_PATTERNS = [
  '(a+)+$',
  '(a|aa)+$',
  '(a|a)*$',
  '(.*a){20}$',
  '(\\w+\\s?)*$',
  '^(([a-z])+.)+[A-Z]([a-z])+$',
  '(x+x+)+y',
  '(a)\\1',
  '(?P<x>a)(?P=x)',
  '(?=a)a',
  '(?<!b)a',
  '(?:a{1000}){1000}',
] as const;

/** Inputs the patterns above choke on, up to the longest values the API takes. */
const LONG_INPUTS = [
  `${'a'.repeat(34)}!`,
  `${'a'.repeat(3990)}!`,
  `${'a '.repeat(1000)}!`,
  `${'x'.repeat(240)}`,
] as const;

/** Raw path fragments sent unencoded: bad percent escapes and encoded bytes that are not UTF-8. */
const RAW_FRAGMENTS = ['%zz', '%ff%fe', '%c3%28', '%', '%0d%0a', '%00', '%2F', '%252F', '..%2F..'];

const NUMBERS = [0, 1, -1, 2, 0.5, 3, 1e300, -1e308, 2 ** 53, -(2 ** 31), 1e-300, 5, 100, 10_000_000_000_000];

/** Keys the API reads from bodies and query strings, with the keys of the rule schema. */
const BODY_KEYS = [
  ...Object.keys(addRuleSchema.shape),
  'type',
  'email',
  'identity',
  'authtype',
  'password',
  'default',
  'value',
  'status',
  'scope',
  'name',
  'rse',
  'files',
  'bytes',
  'adler32',
  'md5',
  'pfn',
  'state',
  'reason',
  'pfns',
  'open',
  'attachments',
  'ignore_duplicate',
  'statuses',
  'key',
  'meta',
  'values',
  'options',
  'filters',
  'input_scope',
  'input_name',
  'output_scope',
  'output_name',
  'nbfiles',
  'hostname',
  'port',
  'prefix',
  'impl',
  'domains',
  'scheme',
  'extended_attributes',
  'ranking',
  'distance',
  'used',
  'free',
  'source',
  'expires_at',
  'tombstone',
  'deep',
  'inherit',
  'plugin',
  'rses',
  'accounts',
  'distances',
  'value_type',
  'value_regexp',
  'key_type',
  'override',
  'approve',
  'locked',
  'city',
  'deterministic',
  'volatile',
  'availability_write',
  'latitude',
  'filter',
  'replication_rules',
  'comments',
  'retroactive',
  'dry_run',
  'pattern',
  'excluded_pattern',
  '__proto__',
  'constructor',
];

const QUERY_KEYS = [
  'type',
  'long',
  'lifetime',
  'expression',
  'filters',
  'account',
  'rse',
  'limit',
  'name',
  'recursive',
  'all_states',
  'state',
  'did_type',
  'date',
  'dynamic_depth',
  'schemes',
  'operation',
  'domain',
  'lfn',
  'scheme',
  'identity',
  'account_type',
  'list_pfns',
  'younger_than',
  'older_than',
  'updated_after',
  'nrandom',
  'sort',
  'keys',
  'plugin',
  'created_after',
  'subscription_id',
  'constructor',
];

/** encodeURIComponent, except that an unpaired surrogate becomes the bytes of its 3-byte form (not UTF-8). */
const encode = (text: string): string => {
  try {
    return encodeURIComponent(text);
  } catch {
    return encodeURIComponent(text.replace(/[\uD800-\uDFFF]/g, '')) + '%ED%A0%80';
  }
};

const pick = <T>(values: readonly T[]): fc.Arbitrary<T> => fc.constantFrom(...values);

/** Text for a path variable, a value or a key: mostly names that exist, then hostile text, then anything. */
const textFor = (world: FuzzWorld, variable: string, forWrite: boolean): fc.Arbitrary<string> => {
  const writable = (names: readonly string[]) =>
    forWrite ? names.filter((name) => !world.protectedAccounts.includes(name)) : names;
  const known: readonly string[] = (() => {
    if (/account/.test(variable)) return writable(world.accounts);
    if (/scope/.test(variable)) return world.scopes;
    if (/rse|source|destination/.test(variable)) return [...world.rses, 'A_B', 'NOPE'];
    if (/rule/.test(variable)) return world.ruleIds;
    if (variable === 'key') return [...world.metaKeys, ...world.dids.map((did) => did.name)];
    if (/name|guid/.test(variable)) return world.dids.map((did) => did.name);
    if (/scheme/.test(variable)) return ['root', 'https', 'file', 'srm'];
    if (/section|option/.test(variable)) return ['webui', 'policy', 'fuzz', 'undertaker'];
    if (variable === 'nbfiles' || variable === 'port') return ['1', '-1', '0', '1e300', 'x'];
    if (variable === 'type') return ['userpass', 'x509', 'gss', 'nope'];
    return ['x'];
  })();
  return fc.oneof(
    { weight: 12, arbitrary: known.length > 0 ? pick(known) : fc.constant('x') },
    { weight: 3, arbitrary: pick(HOSTILE) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  );
};

/** A path from a route pattern: each `:variable` one encoded segment, each `*variable` scope/name. */
const pathFor = (world: FuzzWorld, route: RouteEntry): fc.Arbitrary<string> => {
  const forWrite = route.method !== 'GET';
  const parts = route.path.split(/(:[a-z_]+|\*[a-z_]+)/).filter((part) => part !== '');
  const segments = parts.map((part): fc.Arbitrary<string> => {
    if (part.startsWith('*')) {
      return fc.oneof(
        { weight: 6, arbitrary: pick(world.dids).map((did) => `${encode(did.scope)}/${encode(did.name)}`) },
        {
          weight: 2,
          arbitrary: fc
            .tuple(textFor(world, 'scope', forWrite), textFor(world, 'name', forWrite))
            .map(([scope, name]) => `${encode(scope)}/${encode(name)}`),
        },
        { weight: 1, arbitrary: pick(RAW_FRAGMENTS).map((raw) => `${world.scopes[0]}/a${raw}b`) },
        { weight: 1, arbitrary: textFor(world, 'scope', forWrite).map(encode) },
      );
    }
    if (part.startsWith(':')) {
      return fc.oneof(
        { weight: 30, arbitrary: textFor(world, part.slice(1), forWrite).map(encode) },
        { weight: 1, arbitrary: pick(RAW_FRAGMENTS) },
      );
    }
    return fc.constant(part);
  });
  return fc.tuple(...segments).map((texts) => texts.join('') || '/');
};

const didItem = (world: FuzzWorld) =>
  fc.oneof(
    pick(world.dids).map((did) => ({ ...did })),
    fc.record({
      scope: pick([...world.scopes, ...HOSTILE]),
      name: pick([...world.dids.map((did) => did.name), ...HOSTILE]),
    }),
    fc.record({
      scope: pick(world.scopes),
      name: fc.string({ maxLength: 12 }),
      bytes: pick(NUMBERS),
      adler32: pick(['0cc737eb', 'zz', '']),
    }),
  );

/** A JSON value of any type, weighted towards what the API reads. */
const valueFor = (world: FuzzWorld, depth: number): fc.Arbitrary<unknown> => {
  const leaves = fc.oneof(
    pick(NUMBERS),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    pick([
      'false',
      'true',
      'False',
      'DATASET',
      'CONTAINER',
      'FILE',
      'USER',
      'USERPASS',
      'A',
      'SUSPENDED',
      'ACTIVE',
      '',
      'wan',
      'ALL',
      'OK',
    ]),
    pick(HOSTILE),
    pick([...world.accounts, ...world.scopes, ...world.rses, ...world.ruleIds]),
    fc.string({ maxLength: 30 }),
    pick(CATASTROPHIC_PATTERNS),
    pick(LONG_INPUTS),
  );
  if (depth >= 3) return leaves;
  return fc.oneof(
    { weight: 6, arbitrary: leaves },
    { weight: 2, arbitrary: fc.array(didItem(world), { maxLength: 3 }) },
    { weight: 1, arbitrary: fc.array(valueFor(world, depth + 1), { maxLength: 3 }) },
    { weight: 1, arbitrary: fc.dictionary(pick(BODY_KEYS), valueFor(world, depth + 1), { maxKeys: 3 }) },
  );
};

/**
 * Bodies the routes expect (rest-api-reference.md §1), to be mutated: most requests then reach the
 * commands and the deciders instead of stopping at the first check.
 */
const templates = (world: FuzzWorld): Readonly<Record<string, () => unknown>> => {
  const [scope = 'mock', otherScope = scope] = world.scopes;
  const [rse = 'NOPE'] = world.rses;
  const did = () => ({ ...world.dids[0]! });
  const file = (name = 'newfile') => ({ scope, name, bytes: 10, adler32: '0cc737eb' });
  return {
    'POST /accounts/:account': () => ({ type: 'USER', email: 'fuzz@example.org' }),
    'PUT /accounts/:account': () => ({ email: 'other@example.org', status: 'ACTIVE' }),
    'POST /accounts/:account/attr/:key': () => ({ value: 'True' }),
    'POST /accounts/:account/identities': () => ({
      identity: 'fuzzid',
      authtype: 'USERPASS',
      email: 'f@example.org',
      password: 'pw',
      default: false,
    }),
    'DELETE /accounts/:account/identities': () => ({ identity: 'fuzzid', authtype: 'USERPASS' }),
    'POST /config': () => ({ fuzz: { option: 'value', number: 5 } }),
    'POST /dids': () => [{ scope, name: 'newdataset', type: 'DATASET', lifetime: 3600, meta: { project: 'fuzz' } }],
    'POST /dids/*scope_name': () => ({
      type: 'DATASET',
      lifetime: 3600,
      meta: { project: 'fuzz' },
      statuses: { monotonic: false },
    }),
    'POST /dids/*scope_name/dids': () => ({ dids: [did()], rse }),
    'DELETE /dids/*scope_name/dids': () => ({ dids: [did()] }),
    'POST /dids/attachments': () => ({
      attachments: [{ scope, name: 'dataset1', dids: [file()], rse }],
      ignore_duplicate: true,
    }),
    'PUT /dids/*scope_name/status': () => ({ open: false }),
    'POST /dids/*scope_name/meta': () => ({ meta: { project: 'fuzz', run_number: 5 } }),
    'POST /dids/*scope_name/meta/:key': () => ({ value: LONG_INPUTS[0] }),
    'POST /dids/bulkdidsmeta': () => ({ dids: [{ ...did(), meta: { fuzz: 1 } }] }),
    'POST /dids/bulkmeta': () => ({ dids: [did()], inherit: false, plugin: 'JSON' }),
    'POST /dids/sample': () => ({
      input_scope: scope,
      input_name: 'dataset1',
      output_scope: otherScope,
      output_name: 'sample1',
      nbfiles: 1,
    }),
    'POST /dids/resurrect': () => [did()],
    'POST /dids/*scope_name/follow': () => ({ account: world.accounts[0] }),
    'DELETE /dids/*scope_name/follow': () => ({ account: world.accounts[0] }),
    'POST /dids/bulkfiles': () => ({ dids: [did()] }),
    'POST /replicas': () => ({ rse, files: [file()] }),
    'PUT /replicas': () => ({ rse, files: [{ ...did(), state: 'A' }] }),
    'DELETE /replicas': () => ({ rse, files: [did()] }),
    'POST /replicas/list': () => ({ dids: [did()], schemes: ['root'], rse_expression: rse, all_states: true }),
    'POST /replicas/bad/dids': () => ({ rse, dids: [did()], reason: 'fuzz' }),
    'POST /replicas/bad/pfns': () => ({
      pfns: ['root://xrd.example.org:1094/data/x'],
      reason: 'fuzz',
      state: 'SUSPICIOUS',
      expires_at: null,
    }),
    'POST /replicas/bad': () => ({ pfns: ['root://xrd.example.org:1094/data/x'], reason: 'fuzz' }),
    'POST /replicas/suspicious': () => ({ pfns: ['root://xrd.example.org:1094/data/x'], reason: 'fuzz' }),
    'POST /replicas/tombstone': () => ({ replicas: [{ rse, ...did() }] }),
    'POST /replicas/quarantine': () => ({ rse, replicas: [{ path: '/data/dark' }] }),
    'POST /replicas/datasets_bulk': () => ({ dids: [did()] }),
    'POST /replicas/dids': () => ({ pfns: ['root://xrd.example.org:1094/data/x'], rse }),
    'POST /rses/:rse': () => ({
      city: 'Geneva',
      deterministic: true,
      volatile: false,
      rse_type: 'DISK',
      latitude: 46.2,
    }),
    'PUT /rses/:rse': () => ({ availability_write: false, city: 'Bern' }),
    'POST /rses/:rse/attr/:key': () => ({ value: 'fuzz' }),
    'POST /rses/:rse/protocols/:scheme': () => ({
      hostname: 'h.example.org',
      port: 443,
      prefix: '/p',
      impl: 'rucio.rse.protocols.webdav.Default',
      domains: { wan: { read: 1, write: 1, delete: 1 } },
    }),
    'PUT /rses/:rse/protocols/:scheme': () => ({ prefix: '/q' }),
    'PUT /rses/:rse/usage': () => ({ source: 'fuzz', used: 10, free: 20 }),
    'PUT /rses/:rse/limits': () => ({ name: 'MinFreeSpace', value: 10 }),
    'POST /rses/:source/distances/:destination': () => ({ distance: 1, ranking: 1 }),
    'PUT /rses/:source/distances/:destination': () => ({ distance: 2 }),
    'POST /accountlimits/local/:account/:rse': () => ({ bytes: 1000 }),
    'POST /accountlimits/global/:account/:rse_expression': () => ({ bytes: 1000 }),
    'POST /accountlimits/:account/:rse': () => ({ bytes: 1000 }),
    'POST /rules/': () => ({
      dids: [did()],
      copies: 1,
      rse_expression: rse,
      lifetime: 3600,
      grouping: 'DATASET',
      comment: 'fuzz',
    }),
    'PUT /rules/:rule_id': () => ({ options: { lifetime: 3600, locked: false, comment: 'fuzz' } }),
    'POST /rules/:rule_id/reduce': () => ({ copies: 1 }),
    'POST /rules/:rule_id/move': () => ({ rse_expression: rse, override: { comment: 'fuzz' } }),
    'DELETE /rules/:rule_id': () => ({ purge_replicas: false }),
    'POST /meta_conventions/:key': () => ({
      value: 'fuzz',
      key_type: 'ALL',
      value_type: 'str',
      value_regexp: CATASTROPHIC_PATTERNS[0],
    }),
    'POST /locks/bulk_locks_for_dids': () => ({ dids: [did()] }),
    'POST /subscriptions/:account/:name': () => ({
      options: {
        filter: {
          scope: [scope],
          did_type: ['DATASET'],
          pattern: 'data.*',
          excluded_pattern: CATASTROPHIC_PATTERNS[3],
        },
        replication_rules: [{ copies: 1, rse_expression: rse }],
        comments: 'fuzz',
        lifetime: 1,
        retroactive: false,
        dry_run: false,
        priority: 3,
      },
    }),
    'PUT /subscriptions/:account/:name': () => ({
      options: { comments: 'fuzz', lifetime: 1, state: 'I', filter: { datatype: ['AOD'] } },
    }),
    'POST /lifetime_exceptions/': () => ({ dids: [did()], pattern: 'fuzz', comments: 'fuzz', expires_at: null }),
    'PUT /lifetime_exceptions/:exception_id': () => ({ state: 'A' }),
    'POST /import': () => ({
      rses: { FUZZ_IMPORTED: { rse_type: 'DISK', attributes: { tier: 1 } } },
      accounts: [{ account: 'fuzzimported', email: 'i@example.org' }],
    }),
  };
};

/** A template with one value replaced, one key removed or one key added (or none). */
const mutated = (world: FuzzWorld, template: unknown): fc.Arbitrary<unknown> => {
  const mutateObject = (object: Record<string, unknown>): fc.Arbitrary<unknown> => {
    const keys = Object.keys(object);
    if (keys.length === 0) return fc.constant(object);
    return fc.oneof(
      { weight: 2, arbitrary: fc.constant(object) },
      {
        weight: 6,
        arbitrary: fc.tuple(pick(keys), valueFor(world, 1)).map(([key, value]) => ({ ...object, [key]: value })),
      },
      {
        weight: 2,
        arbitrary: fc.tuple(pick(keys), pick(HOSTILE_VALUES)).map(([key, value]) => ({ ...object, [key]: value })),
      },
      {
        weight: 1,
        arbitrary: pick(keys).map((key) => Object.fromEntries(Object.entries(object).filter(([name]) => name !== key))),
      },
      {
        weight: 1,
        arbitrary: fc.tuple(pick(BODY_KEYS), valueFor(world, 2)).map(([key, value]) => ({ ...object, [key]: value })),
      },
      {
        weight: 2,
        // One level down: the first nested object or list (dids, meta, options, domains).
        arbitrary: (() => {
          const nested = keys.find((key) => object[key] !== null && typeof object[key] === 'object');
          return nested
            ? mutated(world, object[nested]).map((value) => ({ ...object, [nested]: value }))
            : fc.constant(object);
        })(),
      },
    );
  };
  if (Array.isArray(template)) {
    return template.length > 0
      ? mutated(world, template[0]).map((first) => [first, ...template.slice(1)])
      : fc.constant(template);
  }
  if (template !== null && typeof template === 'object') return mutateObject(template as Record<string, unknown>);
  return fc.constant(template);
};

/** Values that break types, ranges and names: what a careless client or an attacker sends. */
const HOSTILE_VALUES: readonly unknown[] = [
  ...NUMBERS,
  ...CATASTROPHIC_PATTERNS,
  ...LONG_INPUTS,
  -0.5,
  1.5,
  '1e300',
  'false',
  '-1',
  '',
  'x'.repeat(5000),
  'a'.repeat(300),
  'zz\r\nYY',
  '__proto__',
  'constructor',
  [],
  {},
  { constructor: 1 },
  { prototype: { a: 1 } },
  null,
  true,
  [null],
];

/** A body: absent, a route's template mutated, an object of known keys, any JSON, or text that is not JSON at all. */
const bodyFor = (
  world: FuzzWorld,
  route: RouteEntry,
): fc.Arbitrary<{ body: string | Buffer | undefined; headers: Record<string, string> }> => {
  const json = (value: unknown) => ({ body: JSON.stringify(value), headers: {} });
  const template =
    templates(world)[`${route.method} ${route.path.replace(/\/$/, '')}`] ??
    templates(world)[`${route.method} ${route.path}`];
  return fc.oneof(
    {
      weight: template ? 24 : 0,
      arbitrary: template ? mutated(world, template()).map(json) : fc.constant({ body: undefined, headers: {} }),
    },
    { weight: 2, arbitrary: fc.constant({ body: undefined, headers: {} }) },
    { weight: 10, arbitrary: fc.dictionary(pick(BODY_KEYS), valueFor(world, 1), { minKeys: 1, maxKeys: 6 }).map(json) },
    { weight: 2, arbitrary: fc.array(valueFor(world, 1), { maxLength: 4 }).map(json) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map(json) },
    {
      weight: 2,
      arbitrary: pick([
        '{',
        '',
        'null',
        '"text"',
        '{"type": "DATASET", "lifetime": 1e400}',
        '{"__proto__": {"admin": true}}',
        `{"email": ${'['.repeat(5000)}${']'.repeat(5000)}}`,
        '{"type": "USER", "email": "\\ud800"}',
        '\ufeff{}',
      ]).map((text) => ({ body: text, headers: {} })),
    },
    { weight: 1, arbitrary: fc.constant({ body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), headers: {} }) },
    { weight: 1, arbitrary: fc.constant({ body: '{"type": "DATASET"}', headers: { 'Content-Encoding': 'gzip' } }) },
    {
      weight: 1,
      arbitrary: fc.constant({ body: gzipSync('{"type": "DATASET"}'), headers: { 'Content-Encoding': 'gzip' } }),
    },
    { weight: 1, arbitrary: fc.constant({ body: '{}', headers: { 'Content-Encoding': 'compress' } }) },
  );
};

const queryFor = (world: FuzzWorld): fc.Arbitrary<string> =>
  fc
    .array(
      fc.tuple(
        pick(QUERY_KEYS),
        fc.oneof(
          valueFor(world, 3).map((value) => (typeof value === 'string' ? value : JSON.stringify(value))),
          pick(['[{"name": "*"}]', "[{'name': '*'}]"]),
        ),
      ),
      { maxLength: 2 },
    )
    .chain((pairs) =>
      fc.oneof(
        { weight: 4, arbitrary: fc.constant('') },
        { weight: 9, arbitrary: fc.constant(pairs.map(([key, value]) => `${encode(key)}=${encode(value)}`).join('&')) },
        { weight: 1, arbitrary: pick(RAW_FRAGMENTS).map((raw) => `name=a${raw}`) },
      ),
    );

/** One request to one route of the table. */
export const fuzzRequest = (world: FuzzWorld, routes: readonly RouteEntry[]): fc.Arbitrary<FuzzRequest> =>
  pick(routes).chain((route) =>
    fc
      .record({
        path: pathFor(world, route),
        query: queryFor(world),
        body: bodyFor(world, route),
        token: fc.oneof(
          { weight: 14, arbitrary: pick(world.tokens) },
          { weight: 1, arbitrary: fc.constant(undefined) },
          { weight: 1, arbitrary: fc.constant('root-ddmlab-unknown-00000000000000000000000000000000') },
        ),
        extra: fc.dictionary(
          pick(['X-Svc-Account', 'X-Svc-Username', 'X-Svc-Password', 'Accept', 'X-Svc-AppID', 'Origin']),
          pick([
            'root',
            'ddmlab',
            'wrong',
            'application/json',
            'application/x-json-stream',
            'text/html',
            '*/*',
            'nobody',
            'https://ui.example.org',
          ]),
          { maxKeys: 2 },
        ),
      })
      .map(({ path, query, body, token, extra }) => ({
        method: route.method,
        route: `${route.method} ${route.path}`,
        path: query ? `${path}?${query}` : path,
        headers: { ...extra, ...body.headers, ...(token ? { 'X-Svc-Auth-Token': token } : {}) },
        body: body.body,
      })),
  );
