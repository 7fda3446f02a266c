import { expect } from 'chai';
import { literalPrefix } from '../../domain/subscription/filterPatterns.ts';
import { compileFilter, parseSubscriptionFilter, type DidFacts } from '../../domain/subscription/subscriptionFilter.ts';
import { SubscriptionIndex } from '../../domain/subscription/subscriptionIndex.ts';
import type { SubscriptionRecord, SubscriptionState } from '../../domain/subscription/subscription.ts';
import { InvalidObject } from '../../domain/shared/errors.ts';

const did = (extra: Partial<DidFacts> = {}, columns: DidFacts['columns'] = {}): DidFacts => ({
  scope: 'mc16_13TeV',
  name: 'mc16_13TeV.410470.AOD.e6337',
  didType: 'DATASET',
  account: 'prod',
  ...extra,
  columns: {
    hidden: false,
    datatype: 'AOD',
    project: 'mc16_13TeV',
    run_number: 410470,
    length: null,
    bytes: null,
    ...columns,
  },
});
const matches = (filter: object, facts: DidFacts = did()) =>
  compileFilter(parseSubscriptionFilter(filter)).matches(facts);

describe('Subscription filters (§7)', () => {
  describe('matching, as the transmogrifier does', () => {
    it('matches `pattern` at the start of the name and refuses an `excluded_pattern` match', () => {
      expect(matches({ pattern: 'mc16_13TeV\\.4104' })).to.equal(true);
      expect(matches({ pattern: 'AOD' })).to.equal(false);
      expect(matches({ pattern: '.*AOD' })).to.equal(true);
      expect(matches({ pattern: 'mc16', excluded_pattern: '.*e6337$' })).to.equal(false);
    });
    it('takes scope expressions anchored at the start only (`data` matches `data18_13TeV`), any of them', () => {
      expect(matches({ scope: ['data', 'mc16'] })).to.equal(true);
      expect(matches({ scope: ['mc16_*'] })).to.equal(true);
      expect(matches({ scope: ['mc15.*'] })).to.equal(false);
      expect(matches({ scope: ['^mc16_13TeV$'] })).to.equal(true);
    });
    it('matches the owner against `account` and the type against `did_type`', () => {
      expect(matches({ account: ['prod', 'tzero'] })).to.equal(true);
      expect(matches({ account: 'tzero' })).to.equal(false);
      expect(matches({ did_type: ['CONTAINER'] })).to.equal(false);
      expect(matches({ did_type: 'DATASET' })).to.equal(true);
    });
    it('matches metadata columns by their Python text, one value of the list sufficing', () => {
      expect(matches({ datatype: ['ESD', 'AOD'] })).to.equal(true);
      expect(matches({ datatype: ['ESD'] })).to.equal(false);
      expect(matches({ run_number: [4104] })).to.equal(true);
      expect(matches({ project: ['data.*'] })).to.equal(false);
      expect(matches({ version: 'e6337' }, did({}, { version: 'e6337_s3126' }))).to.equal(true);
      // An unset column is Python's None.
      expect(matches({ stream_name: ['physics'] })).to.equal(false);
      expect(matches({ hidden: 'False' })).to.equal(true);
      // Rucio's `group` is the `phys_group` column.
      expect(matches({ group: 'phys-higgs' }, did({}, { phys_group: 'phys-higgs' }))).to.equal(true);
    });
    it('bounds the average file size only when it is known', () => {
      expect(matches({ min_avg_file_size: 1000 })).to.equal(true);
      expect(matches({ min_avg_file_size: 1000 }, did({}, { length: 10, bytes: 5000 }))).to.equal(false);
      expect(matches({ max_avg_file_size: 1000 }, did({}, { length: 10, bytes: 5000 }))).to.equal(true);
    });
    it('never matches a hidden DID, and ignores `split_rule` and `grouping` as conditions', () => {
      expect(matches({}, did({}, { hidden: true }))).to.equal(false);
      expect(matches({ split_rule: true, grouping: 'DATASET' })).to.equal(true);
    });
    it('reads Python spellings: named groups and \\Z', () => {
      expect(matches({ pattern: '(?P<project>mc16)_13TeV\\.(?P<run>4104)' })).to.equal(true);
      expect(matches({ pattern: 'mc16_13TeV.410470.AOD.e6337\\Z' })).to.equal(true);
    });
  });

  describe('checking, when a subscription is added or updated', () => {
    const refused = (filter: unknown, message: RegExp) =>
      expect(() => parseSubscriptionFilter(filter)).to.throw(InvalidObject, message);
    it('refuses what is not a dictionary', () => refused(['x'], /filter should be a dict/));
    it('refuses invalid regular expressions, naming the key', () => {
      refused({ pattern: '(' }, /pattern "\(" is not a valid regular expression/);
      refused({ scope: ['[a-'] }, /scope "\[a-" is not a valid regular expression/);
      refused({ datatype: ['*AOD'] }, /datatype "\*AOD" is not a valid regular expression/);
    });
    it('refuses what needs backtracking (RE2 runs every pattern in linear time)', () => {
      refused({ pattern: '(?P<p>mc16)_(?P=p)' }, /pattern .* backreference/);
      refused({ pattern: '(a)\\1' }, /backreference \\1/);
      refused({ scope: ['mc(?=16)'] }, /scope .* lookaround/);
      refused({ excluded_pattern: '(?<!x)AOD' }, /lookaround/);
    });
    it('refuses values of the wrong type', () => {
      refused({ datatype: 'AOD' }, /datatype must be an array/);
      refused({ pattern: 5 }, /pattern must be a string/);
      refused({ split_rule: 'true' }, /split_rule must be a boolean/);
      refused({ min_avg_file_size: '5' }, /min_avg_file_size must be a number/);
      refused({ run_number: [{ a: 1 }] }, /must be strings, numbers or booleans/);
    });
    it('refuses keys no DID could ever match, and empty value lists', () => {
      refused({ colour: 'red' }, /"colour" is neither a filter option nor a DID metadata column/);
      refused({ datatype: [] }, /datatype lists no value/);
      refused({ __proto__x: 1, ['__proto__']: 1 }, /reserved|neither/);
    });
    it("refuses filters longer than Rucio's column", () =>
      refused(
        {
          pattern: 'a'.repeat(999),
          excluded_pattern: 'b'.repeat(999),
          project: ['c'.repeat(999), 'd'.repeat(999), 'e'.repeat(999)],
        },
        /longer than 4000/,
      ));
  });
});

describe('The subscription index', () => {
  const subscription = (
    id: string,
    filter: Record<string, unknown>,
    state: SubscriptionState = 'ACTIVE',
    priority = 3,
  ): { record: SubscriptionRecord; state: SubscriptionState } => ({
    record: {
      id,
      name: id,
      account: 'root',
      filter,
      replicationRules: [],
      comments: null,
      lifetime: null,
      retroactive: false,
      dryRun: false,
      priority,
      createdAt: '2026-01-01T00:00:00.000Z',
    },
    state,
  });

  it('files each scope expression under its literal prefix', () => {
    expect(literalPrefix('mc16_.*')).to.equal('mc16_');
    expect(literalPrefix('mc16_*')).to.equal('mc16');
    expect(literalPrefix('data18\\.')).to.equal('data18.');
    expect(literalPrefix('^user\\.jdoe')).to.equal('user.jdoe');
    expect(literalPrefix('(mc|data)16')).to.equal('');
    expect(literalPrefix('mc16|data')).to.equal('');
    expect(literalPrefix('a?b')).to.equal('');
    expect(literalPrefix('ab{2}')).to.equal('a');
  });

  it('gives a DID the subscriptions its scope and type could match, by priority, never the others', () => {
    const index = new SubscriptionIndex([
      subscription('mc', { scope: ['mc16_.*'] }, 'ACTIVE', 2),
      subscription('anyScope', { pattern: 'x' }),
      subscription('mcContainers', { scope: ['mc16'], did_type: ['CONTAINER'] }),
      subscription('data', { scope: ['data18'] }),
      subscription('alternation', { scope: ['(mc|data)16'] }, 'UPDATED', 1),
      subscription('stopped', { scope: ['mc16'] }, 'INACTIVE'),
      subscription('retroactive', { scope: ['mc16'] }, 'NEW', 5),
    ]);
    expect(index.size).to.equal(6);
    expect(index.candidates('mc16_13TeV', 'DATASET').map((found) => found.record.id)).to.deep.equal([
      'alternation',
      'mc',
      'anyScope',
      'retroactive',
    ]);
    expect(index.candidates('mc16_13TeV', 'CONTAINER').map((found) => found.record.id)).to.deep.equal([
      'alternation',
      'mc',
      'anyScope',
      'mcContainers',
      'retroactive',
    ]);
    expect(index.candidates('data18_13TeV', 'DATASET').map((found) => found.record.id)).to.deep.equal([
      'alternation',
      'anyScope',
      'data',
    ]);
    expect(index.candidates('user.jdoe', 'DATASET').map((found) => found.record.id)).to.deep.equal([
      'alternation',
      'anyScope',
    ]);
  });

  it('finds among a thousand subscriptions of distinct scopes only the few a DID could match', () => {
    const index = new SubscriptionIndex(
      Array.from({ length: 1000 }, (_, number) => subscription(`s${number}`, { scope: [`scope${number}\\.`] })),
    );
    expect(index.candidates('scope42.x', 'DATASET').map((found) => found.record.id)).to.deep.equal(['s42']);
  });
});
