import { expect } from 'chai';
import fc from 'fast-check';
import { DEFAULT_RSE_PROPERTIES, type RseAttributeValue, type RseProperties } from '../../domain/rse/rse.ts';
import {
  evaluateRseExpression,
  matchRseExpression,
  parseRseExpression,
  type RseFacts,
} from '../../domain/rse/rseExpression.ts';
import { InvalidObject, InvalidRSEExpression } from '../../domain/shared/errors.ts';

const rse = (
  name: string,
  attributes: Record<string, RseAttributeValue> = {},
  properties: Partial<RseProperties> = {},
): RseFacts => ({
  id: `id-${name}`,
  rse: name,
  properties: { ...DEFAULT_RSE_PROPERTIES, ...properties },
  attributes: { [name]: true, ...attributes },
});

const universe: RseFacts[] = [
  rse('CERN_DISK', { tier: '0', country: 'CH', type: 'DATADISK', freespace: '120' }, { city: 'Geneva' }),
  rse('CERN_TAPE', { tier: '0', country: 'CH', type: 'TAPE' }, { rse_type: 'TAPE', deterministic: false }),
  rse('BNL_DISK', { tier: '1', country: 'US', type: 'DATADISK', freespace: '40', tier1: true }),
  rse(
    'FZK-SCRATCH',
    { tier: '1', country: 'DE', type: 'SCRATCHDISK', freespace: 'lots', tier1: 'True' },
    { availability_write: false },
  ),
];

const names = (expression: string) => evaluateRseExpression(expression, universe).map((selected) => selected.rse);
const refused = (expression: string, message: RegExp, errorClass: typeof InvalidRSEExpression = InvalidRSEExpression) =>
  expect(() => evaluateRseExpression(expression, universe), expression).to.throw(errorClass, message);

describe('RSE expressions', () => {
  describe('the examples of the reference', () => {
    it('selects by name, by *, by attribute value and by boolean attribute', () => {
      expect(names('CERN_DISK')).to.deep.equal(['CERN_DISK']);
      expect(names('*')).to.have.length(4);
      expect(names('country=CH')).to.deep.equal(['CERN_DISK', 'CERN_TAPE']);
      expect(names('tier1')).to.deep.equal(['BNL_DISK', 'FZK-SCRATCH']);
      expect(names('tier1=true')).to.deep.equal(['BNL_DISK', 'FZK-SCRATCH']);
      expect(names('FZK-SCRATCH')).to.deep.equal(['FZK-SCRATCH']);
    });

    it('compares columns of the record with typed values', () => {
      expect(names('rse_type=TAPE')).to.deep.equal(['CERN_TAPE']);
      expect(names('deterministic=false')).to.deep.equal(['CERN_TAPE']);
      expect(names('deterministic=0')).to.deep.equal(['CERN_TAPE']);
      expect(names('availability_write=true')).to.deep.equal(['CERN_DISK', 'CERN_TAPE', 'BNL_DISK']);
      expect(names('city=Geneva')).to.deep.equal(['CERN_DISK']);
      expect(names('rse=BNL_DISK')).to.deep.equal(['BNL_DISK']);
      expect(names('volatile=false&deterministic')).to.deep.equal(['CERN_DISK', 'BNL_DISK', 'FZK-SCRATCH']);
      refused('rse_type=FLOPPY', /Invalid rse_type: FLOPPY/, InvalidObject);
      refused('deterministic=maybe', /Invalid boolean value: maybe/, InvalidObject);
    });

    it('compares attributes numerically and skips values that are no numbers', () => {
      expect(names('freespace>50')).to.deep.equal(['CERN_DISK']);
      expect(names('freespace<50')).to.deep.equal(['BNL_DISK']);
      expect(names('tier<1')).to.deep.equal(['CERN_DISK', 'CERN_TAPE']);
      expect(names('tier1>0')).to.deep.equal(['BNL_DISK']);
      refused('freespace>abc', /resulted in an empty set/);
    });

    it('combines with union, intersection and complement, left to right', () => {
      expect(names('tier=1|country=CH')).to.have.members(['CERN_DISK', 'CERN_TAPE', 'BNL_DISK', 'FZK-SCRATCH']);
      expect(names('country=CH&type=TAPE')).to.deep.equal(['CERN_TAPE']);
      expect(names('*\\country=CH')).to.deep.equal(['BNL_DISK', 'FZK-SCRATCH']);
      expect(names('CERN_DISK|BNL_DISK&tier=1')).to.deep.equal(['BNL_DISK']);
      expect(names('CERN_DISK|(BNL_DISK&tier=1)')).to.deep.equal(['CERN_DISK', 'BNL_DISK']);
      expect(names('((country=CH))\\CERN_TAPE')).to.deep.equal(['CERN_DISK']);
    });

    it('refuses bad syntax and empty results with Rucio messages', () => {
      for (const expression of ['(CERN_DISK', 'CERN_DISK)', ')CERN_DISK('])
        refused(expression, /^Problem with parentheses\.$/);
      for (const expression of [
        'CERN_DISK|',
        '|CERN_DISK',
        'CERN DISK',
        'a.b',
        'x>1.5',
        'A__B',
        '()',
        '(A)(B)',
        'A|&B',
        'tier=1=2',
        '',
        'A_',
      ]) {
        refused(expression, /^Expression does not comply to RSE Expression syntax$/);
      }
      refused('NOWHERE', /^RSE Expression resulted in an empty set\.$/);
      refused('CERN_DISK&BNL_DISK', /empty set/);
    });
  });

  describe('properties', () => {
    const attributeKeys = ['a', 'b', 'c', 'd'] as const;
    const universes = fc
      .array(fc.record({ a: fc.boolean(), b: fc.boolean(), c: fc.boolean(), d: fc.boolean() }), {
        minLength: 1,
        maxLength: 8,
      })
      .map((flags) =>
        flags.map((flag, index) =>
          rse(`R${index}`, Object.fromEntries(attributeKeys.filter((key) => flag[key]).map((key) => [key, true]))),
        ),
      );
    type Tree = { key: string } | { operator: '|' | '&' | '\\'; left: Tree; right: Tree };
    const trees = fc.letrec<{ tree: Tree }>((tie) => ({
      tree: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.constantFrom(...attributeKeys).map((key) => ({ key })),
        fc.record({
          operator: fc.constantFrom('|' as const, '&' as const, '\\' as const),
          left: tie('tree'),
          right: tie('tree'),
        }),
      ),
    })).tree;
    const render = (tree: Tree): string =>
      'key' in tree ? tree.key : `(${render(tree.left)}${tree.operator}${render(tree.right)})`;
    const reference = (tree: Tree, rses: RseFacts[]): Set<string> => {
      if ('key' in tree)
        return new Set(
          rses.filter((candidate) => candidate.attributes[tree.key] === true).map((candidate) => candidate.id),
        );
      const left = reference(tree.left, rses);
      const right = reference(tree.right, rses);
      if (tree.operator === '|') return new Set([...left, ...right]);
      if (tree.operator === '&') return new Set([...left].filter((id) => right.has(id)));
      return new Set([...left].filter((id) => !right.has(id)));
    };
    const sorted = (ids: Set<string>) => [...ids].sort();

    it('evaluates fully parenthesised expressions as set algebra', () =>
      fc.assert(
        fc.property(universes, trees, (rses, tree) => {
          expect(sorted(matchRseExpression(parseRseExpression(render(tree)), rses))).to.deep.equal(
            sorted(reference(tree, rses)),
          );
        }),
      ));

    it('applies operators without parentheses strictly from left to right', () =>
      fc.assert(
        fc.property(
          universes,
          fc.constantFrom(...attributeKeys),
          fc.array(
            fc.tuple(fc.constantFrom('|' as const, '&' as const, '\\' as const), fc.constantFrom(...attributeKeys)),
            { maxLength: 6 },
          ),
          (rses, first, rest) => {
            const flat = first + rest.map(([operator, key]) => operator + key).join('');
            const leftFolded = rest.reduce<Tree>((left, [operator, key]) => ({ operator, left, right: { key } }), {
              key: first,
            });
            expect(sorted(matchRseExpression(parseRseExpression(flat), rses))).to.deep.equal(
              sorted(reference(leftFolded, rses)),
            );
          },
        ),
      ));

    it('obeys the laws of set algebra', () =>
      fc.assert(
        fc.property(universes, trees, trees, trees, (rses, x, y, z) => {
          const [a, b, c] = [render(x), render(y), render(z)];
          const ids = (expression: string) => sorted(matchRseExpression(parseRseExpression(expression), rses));
          expect(ids(`${a}|${b}`)).to.deep.equal(ids(`${b}|${a}`));
          expect(ids(`${a}&${b}`)).to.deep.equal(ids(`${b}&${a}`));
          expect(ids(`${a}&(${b}|${c})`)).to.deep.equal(ids(`(${a}&${b})|(${a}&${c})`));
          expect(ids(`${a}\\(${b}|${c})`)).to.deep.equal(ids(`(${a}\\${b})&(${a}\\${c})`));
          expect(ids(`${a}\\${a}`)).to.deep.equal([]);
          expect(ids(`(${a}|${b})\\${b}`)).to.deep.equal(ids(`${a}\\${b}`));
        }),
      ));

    it('never accepts a string with unbalanced parentheses', () =>
      fc.assert(
        fc.property(fc.string({ unit: fc.constantFrom('(', ')', 'A', '|', '&') }), (text) => {
          let depth = 0;
          let balanced = true;
          for (const char of text) {
            depth += char === '(' ? 1 : char === ')' ? -1 : 0;
            if (depth < 0) balanced = false;
          }
          if (balanced && depth === 0) return;
          expect(() => parseRseExpression(text)).to.throw(InvalidRSEExpression, /Problem with parentheses/);
        }),
      ));
  });
});
