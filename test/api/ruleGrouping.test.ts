import { expect } from 'chai';
import { newScope } from '../support/dids.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import {
  aCollectionOverHttp,
  aDatasetOverHttp,
  attachOverHttp,
  datasetLocksOverHttp,
  locksOverHttp,
  ruleJsonOverHttp,
  ruleOverHttp,
} from '../support/rules.ts';
import { rseWithProtocols } from './replicaSupport.ts';

/**
 * Grouping over HTTP (rule 15): where a rule's locks go, seen through the rule's replica locks
 * and the dataset locks. Every choice here is decided by where the data already is, so the
 * answers do not depend on the random choice among equals.
 */
describe('API: rule grouping (rule 15)', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  /** Three RSEs A, B, C (C empty) and a scope. */
  const sites = async () => {
    const scope = await newScope(server);
    const [a, b, c] = [
      (await rseWithProtocols(server)).rse,
      (await rseWithProtocols(server)).rse,
      (await rseWithProtocols(server)).rse,
    ];
    return { scope, a, b, c };
  };

  /** A container of two datasets: ds1 (f1, f2) on A, ds2 (f3) on B. */
  const containerOfTwo = async () => {
    const world = await sites();
    const { scope, a, b } = world;
    await aDatasetOverHttp(server, scope, 'ds1', [
      { name: 'f1', at: a },
      { name: 'f2', at: a },
    ]);
    await aDatasetOverHttp(server, scope, 'ds2', [{ name: 'f3', at: b }]);
    await aCollectionOverHttp(server, scope, 'cont', 'CONTAINER');
    await attachOverHttp(server, scope, 'cont', ['ds1', 'ds2']);
    return world;
  };

  it('DATASET keeps all files of a dataset on the RSE that already holds most of it, even a file that is elsewhere (rule 15)', async () => {
    const { scope, a, b, c } = await sites();
    await aDatasetOverHttp(server, scope, 'ds', [
      { name: 'f1', at: a },
      { name: 'f2', at: a },
      { name: 'f3', at: b },
    ]);
    const ruleId = await ruleOverHttp(server, {
      dids: [{ scope, name: 'ds' }],
      copies: 1,
      rse_expression: `${a}|${b}|${c}`,
      grouping: 'DATASET',
    });
    expect(await locksOverHttp(server, ruleId)).to.deep.equal([
      ['f1', a, 'OK'],
      ['f2', a, 'OK'],
      ['f3', a, 'REPLICATING'],
    ]);
    expect(await datasetLocksOverHttp(server, scope, 'ds')).to.deep.equal([[a, 'REPLICATING']]);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({
      state: 'REPLICATING',
      grouping: 'DATASET',
      locks_ok_cnt: 2,
      locks_replicating_cnt: 1,
    });
  });

  it('DATASET places each dataset of a container on its own, where that dataset is (rule 15)', async () => {
    const { scope, a, b, c } = await containerOfTwo();
    const ruleId = await ruleOverHttp(server, {
      dids: [{ scope, name: 'cont' }],
      copies: 1,
      rse_expression: `${a}|${b}|${c}`,
    });
    expect(await locksOverHttp(server, ruleId)).to.deep.equal([
      ['f1', a, 'OK'],
      ['f2', a, 'OK'],
      ['f3', b, 'OK'],
    ]);
    expect(await datasetLocksOverHttp(server, scope, 'ds1')).to.deep.equal([[a, 'OK']]);
    expect(await datasetLocksOverHttp(server, scope, 'ds2')).to.deep.equal([[b, 'OK']]);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({ state: 'OK', locks_ok_cnt: 3 });
  });

  it('ALL keeps every file of a container together, on the RSE holding most of it (rule 15)', async () => {
    const { scope, a, b, c } = await containerOfTwo();
    const ruleId = await ruleOverHttp(server, {
      dids: [{ scope, name: 'cont' }],
      copies: 1,
      rse_expression: `${a}|${b}|${c}`,
      grouping: 'ALL',
    });
    expect(await locksOverHttp(server, ruleId)).to.deep.equal([
      ['f1', a, 'OK'],
      ['f2', a, 'OK'],
      ['f3', a, 'REPLICATING'],
    ]);
    expect(await datasetLocksOverHttp(server, scope, 'ds1')).to.deep.equal([[a, 'REPLICATING']]);
    expect(await datasetLocksOverHttp(server, scope, 'ds2')).to.deep.equal([[a, 'REPLICATING']]);
  });

  it('ALL with two copies puts both copies of every file on the same two RSEs (rule 15)', async () => {
    const { scope, a, b, c } = await containerOfTwo();
    const ruleId = await ruleOverHttp(server, {
      dids: [{ scope, name: 'cont' }],
      copies: 2,
      rse_expression: `${a}|${b}|${c}`,
      grouping: 'ALL',
    });
    const locks = await locksOverHttp(server, ruleId);
    expect(locks).to.have.length(6);
    expect([...new Set(locks.map(([, rse]) => rse))].sort()).to.deep.equal([a, b].sort());
  });

  it('NONE places each file where it already is and makes no dataset lock (rule 15)', async () => {
    const { scope, a, b, c } = await sites();
    await aDatasetOverHttp(server, scope, 'ds', [
      { name: 'f1', at: a },
      { name: 'f2', at: b },
    ]);
    const ruleId = await ruleOverHttp(server, {
      dids: [{ scope, name: 'ds' }],
      copies: 1,
      rse_expression: `${a}|${b}|${c}`,
      grouping: 'NONE',
    });
    expect(await locksOverHttp(server, ruleId)).to.deep.equal([
      ['f1', a, 'OK'],
      ['f2', b, 'OK'],
    ]);
    expect(await datasetLocksOverHttp(server, scope, 'ds')).to.deep.equal([]);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({ state: 'OK', grouping: 'NONE' });
  });

  it('a rule on a file ignores grouping and keeps the file where it is (rule 15)', async () => {
    const { scope, a, b } = await sites();
    await aDatasetOverHttp(server, scope, 'ds', [{ name: 'f1', at: b }]);
    const ruleId = await ruleOverHttp(server, {
      dids: [{ scope, name: 'f1' }],
      copies: 1,
      rse_expression: `${a}|${b}`,
      grouping: 'ALL',
    });
    expect(await locksOverHttp(server, ruleId)).to.deep.equal([['f1', b, 'OK']]);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({ state: 'OK', did_type: 'FILE' });
  });
});
