import { expect } from 'chai';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import {
  checkedParent,
  isStrictlyBelow,
  localFileOf,
  OutsideRootError,
  pathOfFilePfn,
} from '../../infra/storage/localFiles.ts';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * The storage layer's own reading of a PFN (issue 33): a path stays below the RSE's prefix both as
 * written (resolved lexically) and on disk (through the real path of every directory), whatever a
 * name stored in the catalogue says.
 */
describe('Local files: every path resolved below the prefix, lexically and on disk', () => {
  describe('lexically', () => {
    it('knows what lies strictly below a directory, resolving . and .. without reading the disk', () => {
      expect(isStrictlyBelow('/data/rse/a/b', '/data/rse')).to.equal(true);
      expect(isStrictlyBelow('/data/rse/a/../b', '/data/rse')).to.equal(true);
      expect(isStrictlyBelow('/data/rse', '/data/rse')).to.equal(false);
      expect(isStrictlyBelow('/data/rse/.', '/data/rse/')).to.equal(false);
      expect(isStrictlyBelow('/data/rse/..', '/data/rse')).to.equal(false);
      expect(isStrictlyBelow('/data/rse/a/../../outside/t1', '/data/rse')).to.equal(false);
      expect(isStrictlyBelow('/data/rse2/a', '/data/rse')).to.equal(false);
      expect(isStrictlyBelow('/data/..rse/a', '/data')).to.equal(true);
    });

    it('refuses a PFN with a . or .. name, and merges repeated slashes', () => {
      expect(pathOfFilePfn('file://localhost/data/rse/s/ab/cd//vo/f')).to.equal('/data/rse/s/ab/cd/vo/f');
      expect(pathOfFilePfn('file://localhost/data/rse/s/..hidden/f..')).to.equal('/data/rse/s/..hidden/f..');
      expect(() => pathOfFilePfn('file://localhost/data/rse/s/ab/cd/x/../../../../../outside/t1')).to.throw(
        /climbs out of its prefix with '..'/,
      );
      expect(() => pathOfFilePfn('file://localhost/data/rse/../a4/5e/dotdot.txt')).to.throw(/climbs out/);
      expect(() => pathOfFilePfn('file://localhost/data/rse/./s/f')).to.throw(/holds a '.' name/);
    });

    it('refuses a file that is the prefix itself, a sibling sharing its first letters, or above it', () => {
      for (const pfn of [
        'file://localhost/data/rse',
        'file://localhost/data/rse/',
        'file://localhost/data/rse2/s/f',
        'file://localhost/data/f',
      ])
        expect(() => localFileOf(pfn, '/data/rse'), pfn).to.throw(OutsideRootError);
      expect(localFileOf('file://localhost/data/rse/s/ab/f', '/data/rse/')).to.deep.include({
        root: '/data/rse',
        directories: ['s', 'ab'],
        name: 'f',
      });
    });
  });

  describe('on disk', () => {
    let dir: ReturnType<typeof makeTempDir>;
    beforeEach(() => (dir = makeTempDir('dms-local-files-')));
    afterEach(() => dir.dispose());

    it('reaches a directory below the real path of a prefix that is itself a link (the administrator’s)', async () => {
      const disk = join(dir.path, 'disk1');
      mkdirSync(join(disk, 's', 'ab'), { recursive: true });
      symlinkSync(disk, join(dir.path, 'rse'));
      const parent = await checkedParent(localFileOf(`file://h${dir.path}/rse/s/ab/f`, join(dir.path, 'rse')), {
        create: false,
      });
      expect(parent.directory).to.equal(join(disk, 's', 'ab'));
    });

    it('stops at a link among the directories below the prefix, even one pointing back inside', async () => {
      const root = join(dir.path, 'rse');
      mkdirSync(join(root, 'real'), { recursive: true });
      symlinkSync(join(root, 'real'), join(root, 's'));
      let refusal: unknown;
      await checkedParent(localFileOf(`file://h${root}/s/f`, root), { create: true }).catch((error: unknown) => {
        refusal = error;
      });
      expect(refusal).to.be.instanceOf(OutsideRootError);
      expect(String(refusal)).to.match(/is a symbolic link/);
    });
  });
});
