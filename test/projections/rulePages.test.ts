import { expect } from 'chai';
import { join } from 'node:path';
import type { BulkOperation, Document } from '../../infra/readstore/readStore.ts';
import { SqliteReadStore, type QueryPlan } from '../../infra/readstore/sqlite/sqliteReadStore.ts';
import { allProjections } from '../../projections/index.ts';
import { rulesCollection } from '../../projections/rule/ruleProjection.ts';
import { rulePage, type RulePageFilters } from '../../projections/rule/rulePages.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * The console's rule list over 100 000 rules: every page, however deep, is one statement that
 * starts on the filter's index at the cursor and sorts nothing, so what it reads is what it shows
 * (the plan says so: `SEARCH … USING INDEX … (filter=? AND created_at<?)`, no `SCAN`, no temporary
 * B-tree). The rows are the fields the list filters and sorts on; ten rules share each second, as
 * the rules of one request share their creation time.
 */
describe('Read models: the console’s rule list pages from a cursor on an index', function () {
  this.timeout(120_000);
  const RULES = 100_000;
  let dir: ReturnType<typeof makeTempDir>;
  let store: SqliteReadStore;
  let readModels: ReadModels;
  const plans: QueryPlan[] = [];

  const ruleAt = (index: number): Document => {
    const created = new Date(Date.UTC(2026, 0, 1) + Math.floor(index / 10) * 1000).toISOString();
    return {
      _id: index.toString(16).padStart(32, '0'),
      scope: 'user.jdoe',
      name: `dataset${index}`,
      account: `account${index % 50}`,
      state: index % 97 === 0 ? 'STUCK' : index % 2 === 0 ? 'OK' : 'REPLICATING',
      activity: index % 3 === 0 ? 'Express' : 'User Subscriptions',
      rse_expression: `RSE_${index % 20}`,
      created_at: created,
      updated_at: created,
    };
  };

  before(async () => {
    dir = makeTempDir('rule-pages-');
    store = new SqliteReadStore(join(dir.path, 'read.sqlite'), { queryPlans: (plan) => plans.push(plan) });
    readModels = ReadModels.in(store, allProjections);
    const rules = readModels.collection(rulesCollection);
    let batch: BulkOperation[] = [];
    for (let index = 0; index < RULES; index += 1) {
      batch.push({ insertOne: { document: ruleAt(index) } });
      if (batch.length === 5000) {
        await rules.bulkWrite(batch);
        batch = [];
      }
    }
  });

  after(async () => {
    await store.close();
    dir.dispose();
  });

  /** Every page of a filter, each with the plan of its one statement. */
  const everyPage = async (filters: RulePageFilters, limit: number) => {
    const pages: { ids: string[]; plans: QueryPlan[] }[] = [];
    let after: string | undefined;
    do {
      plans.length = 0;
      const page = await rulePage(readModels, filters, { limit, ...(after ? { after } : {}) });
      pages.push({ ids: page.rules.map((rule) => rule._id), plans: [...plans] });
      after = page.next ?? undefined;
    } while (after);
    return pages;
  };

  const expectedIds = (keep: (index: number) => boolean) => {
    const ids: string[] = [];
    for (let index = 0; index < RULES; index += 1) if (keep(index)) ids.push(ruleAt(index)._id);
    // Newest first; within a second, the larger id first.
    return ids.reverse();
  };

  it('lists the STUCK rules newest first, every page one indexed statement starting at its cursor', async () => {
    const pages = await everyPage({ state: 'STUCK' }, 50);
    expect(pages.flatMap((page) => page.ids)).to.deep.equal(expectedIds((index) => index % 97 === 0));
    for (const [number, page] of pages.entries()) {
      expect(page.plans, `page ${number + 1}`).to.have.length(1);
      const plan = page.plans[0]!.plan.join(' / ');
      expect(plan).to.match(/^SEARCH rules__g1 USING INDEX rules__g1__state__created_at___id \(f:state=\?/);
      if (number > 0) expect(plan).to.include('f:created_at<?');
      expect(plan).not.to.match(/TEMP B-TREE|SCAN/);
    }
  });

  it('reaches the last of 100 000 unfiltered rules through 500 pages, each starting on the index at its cursor', async () => {
    const pages = await everyPage({}, 200);
    expect(pages).to.have.length(RULES / 200);
    const ids = pages.flatMap((page) => page.ids);
    expect(ids).to.have.length(RULES);
    expect(ids[0]).to.equal(ruleAt(RULES - 1)._id);
    expect(ids[RULES - 1]).to.equal(ruleAt(0)._id);
    const deepest = pages[pages.length - 1]!.plans[0]!.plan.join(' / ');
    expect(deepest).to.equal('SEARCH rules__g1 USING INDEX rules__g1__created_at___id (f:created_at<?)');
  });

  it('filters by account, activity and RSE expression on their own indexes', async () => {
    const cases: [RulePageFilters, string, (index: number) => boolean][] = [
      [{ account: 'account7' }, 'account', (index) => index % 50 === 7],
      [{ activity: 'Express' }, 'activity', (index) => index % 3 === 0],
      [{ rse_expression: 'RSE_3' }, 'rse_expression', (index) => index % 20 === 3],
    ];
    for (const [filters, field, keep] of cases) {
      const expected = expectedIds(keep);
      const pages = await everyPage(filters, 200);
      expect(
        pages.flatMap((page) => page.ids),
        field,
      ).to.deep.equal(expected);
      for (const page of pages.slice(1)) {
        expect(page.plans[0]!.plan.join(' / ')).to.equal(
          `SEARCH rules__g1 USING INDEX rules__g1__${field}__created_at___id (f:${field}=? AND f:created_at<?)`,
        );
      }
    }
  });

  it('refuses a cursor it did not make and an unknown state with InvalidValueForKey', async () => {
    for (const given of [{ after: 'nonsense' }, { after: '|abc' }]) {
      const refused = await rulePage(readModels, {}, { limit: 10, ...given }).catch((error: unknown) => error);
      expect(refused).to.have.property('exceptionClass', 'InvalidValueForKey');
    }
    const refused = await rulePage(readModels, { state: 'BLUE' }, { limit: 10 }).catch((error: unknown) => error);
    expect(refused).to.have.property('exceptionClass', 'InvalidValueForKey');
  });
});
