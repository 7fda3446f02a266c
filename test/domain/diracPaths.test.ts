import { expect } from 'chai';
import { diracHierarchy, diracLifetimeOf, extractScope, parseDiracLifetimes } from '../../domain/dirac/diracPaths.ts';
import { InvalidPath, InvalidType } from '../../domain/shared/errors.ts';

describe('DIRAC paths (Rucio core/dirac.py, common/utils.py extract_scope)', () => {
  describe('extractScope', () => {
    it('takes the second element of a DIRAC path by the dirac convention', () =>
      expect(extractScope('/belle/mc/run1/f', 'dirac')).to.equal('mc'));
    it('takes the VO itself for its top container by the dirac convention', () =>
      expect(extractScope('/belle', 'dirac')).to.equal('belle'));
    it('takes the text before the first dot by the def convention, two parts for user scopes', () =>
      expect([extractScope('data18.x.y', 'def'), extractScope('user.jdoe.x', 'def')]).to.deep.equal([
        'data18',
        'user.jdoe',
      ]));
    it('takes the text before a colon by the def convention', () =>
      expect(extractScope('mc16:file.1', 'def')).to.equal('mc16'));
  });

  describe('diracHierarchy', () => {
    it('names the directory the dataset and every directory above it a container, the VO last', () =>
      expect(diracHierarchy('/belle/mc/run1/raw/f')).to.deep.equal({
        dataset: '/belle/mc/run1/raw',
        containers: ['/belle/mc/run1', '/belle/mc', '/belle'],
      }));
    it('refuses a file directly under the VO, a relative path and an empty element', () => {
      for (const lfn of ['/belle/f', 'belle/mc/f', '/belle//mc/f', '/belle/mc/'])
        expect(() => diracHierarchy(lfn), lfn).to.throw(InvalidPath);
    });
  });

  describe('dirac.lifetime', () => {
    it('gives the lifetime of the first pattern matching the start of the scope', () =>
      expect(diracLifetimeOf(parseDiracLifetimes('{"mc.*": 100, "m": 200}'), 'mc16')).to.equal(100));
    it('gives none when no pattern matches', () =>
      expect(diracLifetimeOf(parseDiracLifetimes('{"data": 100}'), 'mc16')).to.equal(null));
    it('refuses text that is not a JSON object of seconds', () => {
      for (const text of ['{', '[1]', '{"mc": "a day"}', '{"(": 1}'])
        expect(() => parseDiracLifetimes(text), text).to.throw(InvalidType);
    });
  });
});
