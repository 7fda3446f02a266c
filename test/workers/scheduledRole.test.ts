import { expect } from 'chai';
import { SETTINGS } from '../../domain/config/settings.ts';
import type { ConfigSections } from '../../domain/config/settings.ts';
import { RuleNotFound } from '../../domain/rule/ruleErrors.ts';
import type { JobTrigger } from '../../workers/role.ts';
import { scheduledRole } from '../../workers/scheduledRole.ts';
import type { WorkerContext } from '../../workers/workerContext.ts';
import { workerContextOver, workerStoresEachTest } from '../support/workerStores.ts';

/**
 * The kit the scheduled roles are made with (workers/scheduledRole.ts): what it does around the
 * pages and work each role gives (these read nothing); the roles themselves have their own tests.
 */
describe('Scheduled roles: the kit every scheduled role is made with (workers/scheduledRole.ts)', () => {
  const trigger: JobTrigger = { jobId: 'repeat:r:1', startedAt: new Date('2026-11-28T10:00:00Z') };
  let settingsRead: number;
  let sections: ConfigSections;
  const stores = workerStoresEachTest();

  beforeEach(() => {
    settingsRead = 0;
    sections = { undertaker: { chunk_size: '7' } };
  });
  afterEach(async () => {});

  /** A worker context over empty stores, whose `/config` is `sections` and counts how often it is read. */
  const context = (): WorkerContext => {
    return {
      ...workerContextOver(stores),
      settings: async () => {
        settingsRead += 1;
        return sections;
      },
    };
  };

  it('reads each page after the previous one is worked, and adds up their reports', async () => {
    const order: string[] = [];
    const role = scheduledRole({
      name: 'paged',
      interval: SETTINGS.undertakerInterval,
      async *pages() {
        for (const page of ['a', 'b', 'c']) {
          order.push(`read ${page}`);
          yield page;
        }
      },
      work: async (page, _cycle, index) => {
        order.push(`work ${page} (${index})`);
        return {
          done: index + 1,
          skipped: [{ what: page, reason: 'left' }],
          ...(page === 'b' ? {} : { detail: `page ${page}` }),
        };
      },
    });
    const report = await role.run(trigger, context());
    expect(order).to.deep.equal(['read a', 'work a (0)', 'read b', 'work b (1)', 'read c', 'work c (2)']);
    expect(report).to.deep.equal({
      done: 6,
      skipped: [
        { what: 'a', reason: 'left' },
        { what: 'b', reason: 'left' },
        { what: 'c', reason: 'left' },
      ],
      detail: 'page a; page c',
    });
  });

  it('reads /config once per cycle and gives every page the same settings, time and causes', async () => {
    const seen: unknown[] = [];
    const role = scheduledRole({
      name: 'undertaker-like',
      interval: SETTINGS.undertakerInterval,
      async *pages() {
        yield 1;
        sections = { undertaker: { chunk_size: '9' } };
        yield 2;
      },
      work: async (_page, cycle) => {
        seen.push([cycle.setting(SETTINGS.undertakerChunkSize), cycle.now, cycle.asRoot('x').causationId]);
        return { done: 0, skipped: [] };
      },
    });
    await role.run(trigger, context());
    expect(settingsRead).to.equal(1);
    const once = [7, '2026-11-28T10:00:00.000Z', 'undertaker-like/repeat:r:1/x'];
    expect(seen).to.deep.equal([once, once]);
  });

  it('works nothing when a role that reads its work at once finds none', async () => {
    let worked = false;
    const role = scheduledRole({
      name: 'idle',
      interval: SETTINGS.undertakerInterval,
      read: async () => undefined,
      work: async () => {
        worked = true;
        return { done: 1, skipped: [] };
      },
    });
    expect(await role.run(trigger, context())).to.deep.equal({ done: 0, skipped: [] });
    expect(worked).to.equal(false);
  });

  it('fails the cycle on an error of a page, for BullMQ to run the job again', async () => {
    const role = scheduledRole({
      name: 'failing',
      interval: SETTINGS.undertakerInterval,
      read: async () => 'page',
      work: async () => {
        throw new RuleNotFound('gone');
      },
    });
    const failure = await role.run(trigger, context()).catch((error: unknown) => error);
    expect(failure).to.be.instanceOf(RuleNotFound);
  });

  it('declares what the host needs: its schedule, its settings, its concurrency', () => {
    const role = scheduledRole({
      name: 'declared',
      interval: SETTINGS.undertakerInterval,
      settings: [SETTINGS.undertakerChunkSize],
      exclusive: true,
      read: async () => undefined,
      work: async () => ({ done: 0, skipped: [] }),
    });
    expect(role).to.include({ kind: 'scheduled', name: 'declared', interval: SETTINGS.undertakerInterval });
    expect(role.settings).to.deep.equal([SETTINGS.undertakerChunkSize]);
    expect(role.exclusive).to.equal(true);
  });
});
