import { compileFilter, type DidFacts } from '../domain/subscription/subscriptionFilter.ts';
import { client, expectStatus, login, type Call } from './lib/httpClient.ts';
import { perSecond, printTable, timed, type Row } from './lib/report.ts';
import { startProcess, type ServerProcess } from './lib/serverProcess.ts';
import { tempDir } from './lib/tempDir.ts';

/**
 * Subscriptions at scale, through the API of one `dms serve` running the transmogrifier alone (a
 * private redis-server): 1 000 subscriptions of varied filters (scopes, name patterns, excluded
 * patterns, datatypes, stream names, production steps, DID types, one hundred without a scope
 * condition), then BENCH_SUBSCRIPTION_DATASETS (default 10 000) new datasets created through
 * `POST /dids`, 100 per request, 8 requests at a time. Figures:
 *
 * - the creation rate of datasets no subscription matches (the transmogrifier still looks at each
 *   and clears its `is_new` flag): the baseline;
 * - from the first creation until every rule the subscriptions give the matching datasets exists
 *   (counted through `GET /subscriptions/{account}/rules/states`), beside the creation alone of
 *   the same datasets.
 *
 * The expected rules are counted with the service's own filter code, so the wait ends exactly.
 */

const DATASETS = Number(process.env.BENCH_SUBSCRIPTION_DATASETS ?? 10_000);
const SUBSCRIPTIONS = 1000;
const SCOPES = 100;
const OWNERS = 10;
const RSES = ['BENCH_RSE_0', 'BENCH_RSE_1', 'BENCH_RSE_2', 'BENCH_RSE_3'] as const;
const PER_REQUEST = 100;
const CONCURRENCY = 8;

const scopeOf = (index: number) => `bench.s${String(index % SCOPES).padStart(3, '0')}`;
const scopeExpression = (index: number) => scopeOf(index).replace('.', '\\.');
const ownerOf = (kind: number) => `benchowner${kind}`;

/** Subscription `index`: its kind (0-9) decides its filter and owner; nine kinds have one subscription per scope. */
const filterOf = (index: number): Record<string, unknown> => {
  const kind = Math.floor(index / SCOPES);
  const scope = [scopeExpression(index)];
  switch (kind) {
    case 0:
      return { scope, pattern: 'data_\\d*[05]$' };
    case 1:
      return { scope, datatype: ['AOD'], pattern: 'mc_' };
    case 2:
      return { scope, did_type: ['CONTAINER'] };
    case 3:
      return { scope, datatype: ['ESD'], excluded_pattern: '.*[13579]$' };
    case 4:
      return { scope, stream_name: ['physics_Main'] };
    case 5:
      return { scope: [`${scopeExpression(index)}$`], account: ['root'], pattern: 'data_1' };
    case 6:
      return { scope, project: ['never_set'] };
    case 7:
      // No scope condition: filed under the empty prefix, a candidate for every DID.
      return { pattern: `data_${index}$` };
    case 8:
      return { scope, did_type: ['DATASET'], excluded_pattern: '.*' };
    default:
      return { scope, prod_step: ['merge'], datatype: ['AOD', 'ESD'] };
  }
};

/** Dataset `n` of a run: its scope, name and metadata. */
const datasetOf = (n: number, prefix: string) => ({
  scope: scopeOf(n),
  name: `${n % 2 === 1 ? 'data_' : 'mc_'}${prefix}${n}`,
  meta: {
    datatype: n % 3 === 0 ? 'ESD' : 'AOD',
    ...(n % 10 === 0 ? { stream_name: 'physics_Main' } : {}),
    ...(n % 10 === 5 ? { prod_step: 'merge' } : {}),
  },
});

/** How many rules the subscriptions give these datasets, by the service's own filters. */
const expectedRules = (datasets: readonly ReturnType<typeof datasetOf>[]): number => {
  const filters = Array.from({ length: SUBSCRIPTIONS }, (_, index) => compileFilter(filterOf(index)));
  let rules = 0;
  for (const dataset of datasets) {
    const facts: DidFacts = {
      scope: dataset.scope,
      name: dataset.name,
      didType: 'DATASET',
      account: 'root',
      columns: { hidden: false, ...dataset.meta },
    };
    for (const filter of filters) if (filter.matches(facts)) rules += 1;
  }
  return rules;
};

/** Creates the datasets through POST /dids, PER_REQUEST per request, CONCURRENCY requests at a time. */
const createDatasets = async (call: Call, datasets: readonly ReturnType<typeof datasetOf>[]): Promise<void> => {
  let next = 0;
  const worker = async () => {
    while (next < datasets.length) {
      const batch = datasets.slice(next, next + PER_REQUEST);
      next += PER_REQUEST;
      expectStatus(
        await call(
          'POST',
          '/dids',
          batch.map((dataset) => ({ ...dataset, type: 'DATASET' })),
        ),
        201,
        'datasets',
      );
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
};

/** Rules made by the subscriptions so far, summed over their owners' rule-state counts. */
const subscriptionRules = async (call: Call): Promise<number> => {
  let total = 0;
  for (let kind = 0; kind < OWNERS; kind += 1) {
    const response = await call('GET', `/subscriptions/${ownerOf(kind)}/rules/states`);
    expectStatus(response, 200, 'rule states');
    for (const line of response.text.split('\n').filter(Boolean))
      total += (JSON.parse(line) as { count: number }).count;
  }
  return total;
};

/** Waits until no DID is flagged new any more: the transmogrifier has seen every one. */
const waitForProcessed = async (call: Call): Promise<void> => {
  const deadline = Date.now() + 1_800_000;
  for (;;) {
    const response = await call('GET', '/dids/new');
    expectStatus(response, 200, 'new DIDs');
    if (response.text === '') return;
    if (Date.now() > deadline) throw new Error('DIDs still new after 30 minutes');
    // Each look reads up to 1000 documents: not too often, or the looking slows the service.
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
};

const waitForRules = async (call: Call, expected: number): Promise<void> => {
  const deadline = Date.now() + 1_800_000;
  for (;;) {
    const made = await subscriptionRules(call);
    if (made >= expected) return;
    if (Date.now() > deadline) throw new Error(`only ${made} of ${expected} subscription rules after 30 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
};

export const runSubscriptionBenchmark = async (): Promise<void> => {
  const rows: Row[] = [];
  const dir = tempDir();
  let server: ServerProcess | undefined;
  try {
    server = await startProcess(
      'bin/dms.ts',
      ['serve', '--roles', 'transmogrifier'],
      { DMS_DATA_DIR: dir.path, PORT: '0', DMS_LOG_LEVEL: 'info' },
      'API listening',
    );
    const call = client(server, await login(server), CONCURRENCY + 1);
    for (const rse of RSES) expectStatus(await call('POST', `/rses/${rse}`, {}), 201, `RSE ${rse}`);
    for (let index = 0; index < SCOPES; index += 1)
      expectStatus(await call('POST', `/scopes/root/${scopeOf(index)}`), 201, 'scope');
    expectStatus(await call('POST', '/scopes/root/bench.unsubscribed'), 201, 'scope');
    for (let kind = 0; kind < OWNERS; kind += 1) {
      expectStatus(
        await call('POST', `/accounts/${ownerOf(kind)}`, { type: 'SERVICE', email: 'bench@example.org' }),
        201,
        'owner',
      );
      // Admin owners are held to no quota: the figures measure rules, not quota refusals.
      expectStatus(
        await call('POST', `/accounts/${ownerOf(kind)}/attr/admin`, { value: 'True' }),
        201,
        'admin attribute',
      );
    }
    const subscriptionsMs = await timed(async () => {
      for (let index = 0; index < SUBSCRIPTIONS; index += 1) {
        const options = {
          filter: filterOf(index),
          replication_rules: [{ copies: 1, rse_expression: RSES[index % RSES.length] }],
          comments: 'bench',
          lifetime: null,
          retroactive: false,
        };
        expectStatus(
          await call('POST', `/subscriptions/${ownerOf(Math.floor(index / SCOPES))}/sub${index}`, { options }),
          201,
          'subscription',
        );
      }
    });
    rows.push({
      name: `${SUBSCRIPTIONS} subscriptions added (one request each)`,
      value: perSecond(SUBSCRIPTIONS, subscriptionsMs),
      unit: 'subscriptions/s',
    });

    // The baseline: datasets no subscription matches, created the same way.
    const unmatched = Array.from({ length: DATASETS }, (_, n) => ({
      ...datasetOf(n, 'x'),
      scope: 'bench.unsubscribed',
      name: `plain_${n}`,
    }));
    let baselineMs = 0;
    const unmatchedMs = await timed(async () => {
      baselineMs = await timed(() => createDatasets(call, unmatched));
      await waitForProcessed(call);
    });
    const baseline = { name: 'creating datasets no subscription matches', value: perSecond(DATASETS, baselineMs) };
    rows.push({ ...baseline, unit: 'datasets/s' });
    rows.push({
      name: '  until the transmogrifier has seen each of them (no rule to make)',
      value: perSecond(DATASETS, unmatchedMs),
      unit: 'datasets/s',
      baseline,
    });

    const datasets = Array.from({ length: DATASETS }, (_, n) => datasetOf(n, ''));
    const expected = expectedRules(datasets);
    let createdMs = 0;
    const allRulesMs = await timed(async () => {
      createdMs = await timed(() => createDatasets(call, datasets));
      await waitForRules(call, expected);
      await waitForProcessed(call);
    });
    rows.push({
      name: `creating ${DATASETS} datasets the subscriptions match (the creation alone)`,
      value: perSecond(DATASETS, createdMs),
      unit: 'datasets/s',
      baseline,
    });
    rows.push({
      name: `  until all ${expected} of their subscription rules exist (and every dataset is seen)`,
      value: allRulesMs,
      unit: 'ms',
    });
    rows.push({
      name: '  the same as a rate of datasets',
      value: perSecond(DATASETS, allRulesMs),
      unit: 'datasets/s',
      baseline,
    });
    rows.push({ name: '  the same as a rate of rules', value: perSecond(expected, allRulesMs), unit: 'rules/s' });
    rows.push({ name: '  peak resident memory of the server', value: server.peakRssMiB(), unit: 'MiB' });
  } finally {
    await server?.stop();
    dir.dispose();
  }
  printTable('Subscriptions: rules the transmogrifier makes for new datasets', rows);
};
