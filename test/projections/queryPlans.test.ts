import { expect } from 'chai';
import { join } from 'node:path';
import { SqliteReadStore, type QueryPlan } from '../../infra/readstore/sqlite/sqliteReadStore.ts';
import type { CollectionSpec, Document } from '../../infra/readstore/readStore.ts';
import { subjectEntries } from '../../projections/audit/auditQueries.ts';
import { didContentsCollection, contentId } from '../../projections/did/didContentsProjection.ts';
import { listBelow, listScope } from '../../projections/did/didListings.ts';
import {
  contentOf,
  datasetsBelow,
  expiredDids,
  filesBelow,
  filesWithGuid,
  listParents,
  newDids,
} from '../../projections/did/didQueries.ts';
import { didsCollection, type DidDocument } from '../../projections/did/didsProjection.ts';
import { deepDatasetReplicas, storedDatasetReplicas } from '../../projections/replica/datasetReplicaQueries.ts';
import { badReplicas, deletionCandidates } from '../../projections/replica/deletionQueries.ts';
import { readModelReplicaCatalogue } from '../../projections/replica/readModelReplicaCatalogue.ts';
import { replicasCollection } from '../../projections/replica/replicaDocuments.ts';
import { eachListedFile, replicaListing } from '../../projections/replica/replicaQueries.ts';
import { requestsInState } from '../../projections/request/conveyorQueries.ts';
import { activeRequest } from '../../projections/request/requestQueries.ts';
import { rsesCollection } from '../../projections/rse/rsesProjection.ts';
import {
  expiredRules,
  locksOfRule,
  rulesInState,
  rulesLockingFile,
  rulesOfDid,
} from '../../projections/rule/ruleQueries.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * The queries of the busy read models use an index: a full scan of a table that grows with the
 * files (DIDs, content edges, replicas, locks, requests, the audit index) would make a listing or
 * a daemon's page cost as much as the catalogue. Each query runs once over a few documents with
 * the read store telling every plan (EXPLAIN QUERY PLAN); indexes a query does not use are
 * dropped from the declarations (each costs every document a write), so this is what keeps the
 * remaining ones honest.
 */
describe('Read-model queries: every busy query is planned on an index', () => {
  const SCOPE = 'user.jdoe';
  const RSE_ID = 'a'.repeat(32);
  let dir: ReturnType<typeof makeTempDir>;
  let readStore: SqliteReadStore;
  let readModels: ReadModels;
  const plans: QueryPlan[] = [];

  const put = (spec: CollectionSpec, document: Document) => readModels.collection(spec).insertOne(document);
  const drain = async (items: AsyncIterable<unknown>) => {
    for await (const _ of items);
  };

  before(async () => {
    dir = makeTempDir('query-plans-');
    readStore = new SqliteReadStore(join(dir.path, 'read.sqlite'), { queryPlans: (plan) => plans.push(plan) });
    readModels = ReadModels.in(readStore);
    const did = (name: string, didType: string): DidDocument => ({
      _id: `${SCOPE}:${name}`,
      scope: SCOPE,
      name,
      account: 'jdoe',
      did_type: didType as DidDocument['did_type'],
      availability: 'AVAILABLE',
      monotonic: false,
      hidden: false,
      obsolete: false,
      suppressed: false,
      purge_replicas: true,
      transient: false,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
      meta: null,
      ...(didType === 'FILE' ? { bytes: 100, adler32: '0cc737eb' } : { is_open: true }),
    });
    await put(rsesCollection, {
      _id: 'SITE_DISK',
      rse: 'SITE_DISK',
      id: RSE_ID,
      deleted: false,
      properties: { rse_type: 'DISK', deterministic: true, volatile: false, availability_read: true },
      attributes: {},
      protocols: [],
      limits: {},
      usage: {},
      qosPolicies: [],
    });
    for (const [name, type] of [
      ['container', 'CONTAINER'],
      ['dataset', 'DATASET'],
      ['file', 'FILE'],
    ] as const)
      await put(didsCollection, did(name, type));
    const edge = (parent: string, child: string, didType: string) => ({
      _id: contentId(`${SCOPE}:${parent}`, `${SCOPE}:${child}`),
      parentKey: `${SCOPE}:${parent}`,
      parentScope: SCOPE,
      parentName: parent,
      childKey: `${SCOPE}:${child}`,
      scope: SCOPE,
      name: child,
      did_type: didType,
      bytes: 100,
    });
    await put(didContentsCollection, edge('container', 'dataset', 'DATASET'));
    await put(didContentsCollection, edge('dataset', 'file', 'FILE'));
    await put(replicasCollection, {
      _id: `${SCOPE}:file ${RSE_ID}`,
      didKey: `${SCOPE}:file`,
      scope: SCOPE,
      name: 'file',
      rse: 'SITE_DISK',
      rse_id: RSE_ID,
      bytes: 100,
      path: null,
      state: 'AVAILABLE',
      lock_cnt: 0,
      tombstone: null,
      updated_at: '2026-01-01T00:00:00.000Z',
    });
    plans.length = 0;
  });

  after(async () => {
    await readStore.close();
    dir.dispose();
  });

  const DATASET = { scope: SCOPE, name: 'dataset' };
  const queries: Record<string, () => Promise<unknown>> = {
    "a dataset's replicas, listed": async () =>
      drain(
        eachListedFile(
          await replicaListing(readModels, {
            dids: [DATASET],
            schemes: undefined,
            domain: undefined,
            clientSite: undefined,
            states: 'available',
            ignoreAvailability: false,
            rseExpression: undefined,
            updatedAfter: undefined,
            resolveParents: true,
            resolveArchives: false,
          }),
        ),
      ),
    "a collection's content": () => drain(contentOf(readModels, SCOPE, 'dataset')),
    "a DID's parents": () => drain(listParents(readModels, SCOPE, 'file')),
    'the datasets below a container': () => datasetsBelow(readModels, SCOPE, 'container'),
    'the files below a container': async () =>
      drain(
        filesBelow(readModels, (await readModels.collection<DidDocument>(didsCollection).get(`${SCOPE}:container`))!),
      ),
    'a scope, listed': () => drain(listScope(readModels, SCOPE, true)),
    'a collection, listed': async () =>
      drain(
        listBelow(
          readModels,
          (await readModels.collection<DidDocument>(didsCollection).get(`${SCOPE}:dataset`))!,
          true,
        ),
      ),
    'new DIDs': () => drain(newDids(readModels, 'DATASET')),
    'expired DIDs': () => expiredDids(readModels, '2027-01-01T00:00:00.000Z', 100),
    'files with a GUID': () => filesWithGuid(readModels, '0'.repeat(32)),
    "a dataset's replicas per RSE": async () =>
      drain(
        storedDatasetReplicas(readModels, [
          (await readModels.collection<DidDocument>(didsCollection).get(`${SCOPE}:dataset`))!,
        ]),
      ),
    "a dataset's replicas per RSE, counted from its files": async () =>
      deepDatasetReplicas(
        readModels,
        (await readModels.collection<DidDocument>(didsCollection).get(`${SCOPE}:dataset`))!,
      ),
    "the reaper's candidates": () =>
      deletionCandidates(readModels, RSE_ID, { now: '2027-01-01T00:00:00.000Z', obsoleteOnly: false, limit: 100 }),
    "the necromancer's bad replicas": () => badReplicas(readModels, 100),
    'the file stored at a path of an RSE': () => readModelReplicaCatalogue(readModels).fileAtPath(RSE_ID, '/data/file'),
    "a DID's rules": () => drain(rulesOfDid(readModels, SCOPE, 'dataset')),
    'the rules locking a file': () => drain(rulesLockingFile(readModels, SCOPE, 'file')),
    "a rule's locks": () => drain(locksOfRule(readModels, 'b'.repeat(32))),
    'expired rules': () => expiredRules(readModels, '2027-01-01T00:00:00.000Z', 100),
    'rules in a state': () => rulesInState(readModels, 'STUCK', '2027-01-01T00:00:00.000Z', 100),
    'queued requests, oldest first': () => requestsInState(readModels, 'QUEUED', 'requested_at', 100),
    'submitted requests, by last change': () => requestsInState(readModels, 'SUBMITTED', 'changed_at', 100),
    "a file's request to an RSE": () => activeRequest(readModels, SCOPE, 'file', RSE_ID),
    "a DID's audit entries": () => drain(subjectEntries(readModels, `did:${SCOPE}:file`, {})),
  };

  for (const [name, query] of Object.entries(queries)) {
    it(`plans ${name} on an index`, async () => {
      plans.length = 0;
      await query();
      expect(plans.length, 'the query ran no SQL').to.be.greaterThan(0);
      for (const { collection, sql, plan } of plans) {
        const fullScans = plan.filter((step) => /^SCAN /.test(step) && !/ USING /.test(step));
        expect(fullScans, `${collection}: ${sql}\n${plan.join('\n')}`).to.deep.equal([]);
      }
    });
  }
});
