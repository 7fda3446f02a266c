import { eventually } from './eventually.ts';
import type { CommandContext } from '../../commands/commandContext.ts';
import { ensureRootAccount } from '../../commands/account/rootAccount.ts';
import { addCollections } from '../../commands/did/didCreationCommands.ts';
import { attachDids } from '../../commands/did/didContentCommands.ts';
import { addReplicas } from '../../commands/replica/replicaRegistrationCommands.ts';
import { createRse, setRseAttribute } from '../../commands/rse/rseCommands.ts';
import { addScope } from '../../commands/scope/scopeCommands.ts';
import { DEFAULT_RSE_PROPERTIES, type RseProperties } from '../../domain/rse/rse.ts';
import { RULE_REQUEST_DEFAULTS, type RuleRequest } from '../../domain/rule/ruleCreation.ts';
import { as } from './commandSpec.ts';
import { path as didPath } from './dids.ts';
import { expectStatus, type TestServer } from './server.ts';

/** Builders for rule tests through the command layer: the world a rule meets, and rule requests. */

export const SCOPE = 'user.root';

/** Root, a scope, and RSEs (DISK unless told), each with the attributes given. */
export const aWorld = async (
  context: CommandContext,
  rses: Readonly<
    Record<
      string,
      Readonly<{ properties?: Partial<RseProperties>; attributes?: Readonly<Record<string, string | boolean>> }>
    >
  >,
): Promise<void> => {
  await ensureRootAccount(context, { username: 'root-login', password: 'pw', email: 'root@localhost' }, new Date());
  await addScope(context, { scope: SCOPE, account: 'root' }, as('root'));
  for (const [rse, { properties, attributes }] of Object.entries(rses)) {
    await createRse(context, { rse, properties: { ...DEFAULT_RSE_PROPERTIES, ...properties } }, as('root'));
    for (const [key, value] of Object.entries(attributes ?? {}))
      await setRseAttribute(context, { rse, key, value }, as('root'));
  }
};

/** A dataset of files, each 100 bytes, with a replica on `rse`. */
export const aDataset = async (
  context: CommandContext,
  name: string,
  files: readonly string[],
  rse: string,
): Promise<void> => {
  await addCollections(
    context,
    {
      dids: [{ scope: SCOPE, name, didType: 'DATASET', monotonic: false, lifetime: null, meta: {}, children: [] }],
      single: true,
    },
    as('root'),
  );
  if (files.length === 0) return;
  const described = files.map((file) => ({ scope: SCOPE, name: file, bytes: 100, adler32: '0cc737eb' }));
  await addReplicas(context, { rse, files: described, ignoreAvailability: true }, as('root'));
  const children = described.map(({ scope, name: file }) => ({ scope, name: file }));
  await attachDids(
    context,
    { attachments: [{ scope: SCOPE, name, children }], ignoreDuplicates: false, single: true },
    as('root'),
  );
};

/** A rule request with Rucio's defaults, owned by root, for one DID of SCOPE. */
export const aRuleRequest = (name: string, rseExpression: string, extra: Partial<RuleRequest> = {}): RuleRequest => ({
  ...RULE_REQUEST_DEFAULTS,
  dids: [{ scope: SCOPE, name }],
  account: 'root',
  rseExpression,
  ...extra,
});

/* Over HTTP: the same world through the API, for the rule tests of test/api and test/workers. */

/** A collection (DATASET unless told) of `scope`, created as root. */
export const aCollectionOverHttp = async (
  server: TestServer,
  scope: string,
  name: string,
  type: 'DATASET' | 'CONTAINER' = 'DATASET',
): Promise<void> => {
  expectStatus(await server.root('POST', didPath(scope, name), { body: { type } }), 201);
};

/**
 * A dataset of files (100 bytes each unless `bytes` says otherwise), each with a replica on the
 * RSE given for it (`at`), created and attached as root.
 */
export const aDatasetOverHttp = async (
  server: TestServer,
  scope: string,
  name: string,
  files: readonly Readonly<{ name: string; at: string; bytes?: number }>[],
): Promise<void> => {
  await aCollectionOverHttp(server, scope, name);
  for (const file of files) {
    expectStatus(
      await server.root('POST', '/replicas', {
        body: { rse: file.at, files: [{ scope, name: file.name, bytes: file.bytes ?? 100, adler32: '0cc737eb' }] },
      }),
      201,
    );
  }
  if (files.length > 0)
    expectStatus(
      await server.root('POST', didPath(scope, name, '/dids'), {
        body: { dids: files.map((file) => ({ scope, name: file.name })) },
      }),
      201,
    );
};

/** Attaches collections to a container as root. */
export const attachOverHttp = async (
  server: TestServer,
  scope: string,
  container: string,
  children: readonly string[],
): Promise<void> => {
  expectStatus(
    await server.root('POST', didPath(scope, container, '/dids'), {
      body: { dids: children.map((name) => ({ scope, name })) },
    }),
    201,
  );
};

/** POST /rules/ (as root unless a token is given), expecting 201; the new rule's id. */
export const ruleOverHttp = async (server: TestServer, body: object, token?: string): Promise<string> => {
  const response = expectStatus(await server.call('POST', '/rules/', { body, token: token ?? server.rootToken }), 201);
  return (JSON.parse(response.text) as string[])[0]!;
};

/** GET /rules/{id} as root, expecting 200. */
export const ruleJsonOverHttp = async (
  server: TestServer,
  ruleId: string,
): Promise<Readonly<Record<string, unknown>>> =>
  expectStatus(await server.root('GET', `/rules/${ruleId}`), 200).json<Readonly<Record<string, unknown>>>();

/**
 * Waits until a daemon brings the rule to `state`, then until every projection group has caught
 * up: what the test reads next (requests, replicas, messages) is other groups' read models, which
 * apply the same events at their own pace.
 */
export const ruleReaches = async (
  server: TestServer,
  ruleId: string,
  state: string,
  timeoutMs: number,
): Promise<void> => {
  await eventually(
    async () => (await ruleJsonOverHttp(server, ruleId)).state === state,
    timeoutMs,
    `the rule ${state}`,
  );
  await server.settled();
};

/** The rule's replica locks as `[name, rse, state]`, sorted. */
export const locksOverHttp = async (server: TestServer, ruleId: string): Promise<[string, string, string][]> =>
  expectStatus(await server.root('GET', `/rules/${ruleId}/locks`), 200)
    .lines<{ name: string; rse: string; state: string }>()
    .map((lock): [string, string, string] => [lock.name, lock.rse, lock.state])
    .sort();

/** The dataset locks of a dataset as `[rse, state]`, sorted. */
export const datasetLocksOverHttp = async (
  server: TestServer,
  scope: string,
  name: string,
): Promise<[string, string][]> =>
  expectStatus(await server.root('GET', `/locks/${scope}/${name}?did_type=dataset`), 200)
    .lines<{ rse: string; state: string }>()
    .map((lock): [string, string] => [lock.rse, lock.state])
    .sort();

/** Sets an account's local limit on an RSE as root. */
export const localLimitOverHttp = async (
  server: TestServer,
  account: string,
  rse: string,
  bytes: number,
): Promise<void> => {
  expectStatus(await server.root('POST', `/accountlimits/local/${account}/${rse}`, { body: { bytes } }), 201);
};

/** Sets an account's global limit on an RSE expression as root. */
export const globalLimitOverHttp = async (
  server: TestServer,
  account: string,
  expression: string,
  bytes: number,
): Promise<void> => {
  expectStatus(
    await server.root('POST', `/accountlimits/global/${account}/${encodeURIComponent(expression)}`, {
      body: { bytes },
    }),
    201,
  );
};
