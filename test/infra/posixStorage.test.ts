import { expect } from 'chai';
import { existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PosixStorage } from '../../infra/storage/posixStorage.ts';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * Deletion on a `file` protocol stays below the protocol's prefix (issue 22): a canary outside the
 * RSE survives whatever the RSE's directories hold.
 */
describe('PosixStorage: deletion inside the RSE', () => {
  let dir: ReturnType<typeof makeTempDir>;
  let root: string;
  let outside: string;
  let canary: string;
  const storage = new PosixStorage();
  const pfn = (path: string) => `file://localhost${root}/${path}`;
  const write = (path: string, content = 'replica') => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  };
  beforeEach(() => {
    dir = makeTempDir('dms-posix-storage-');
    root = join(dir.path, 'rse');
    outside = join(dir.path, 'outside');
    canary = join(outside, 'user', 'ab', 'file');
    write(canary, 'canary');
    mkdirSync(root);
  });
  afterEach(() => dir.dispose());

  it('deletes a file below the prefix, and answers not-found for one that is missing', async () => {
    write(join(root, 'user', 'ab', 'file'));
    const results = await storage.delete([pfn('user/ab/file'), pfn('user/cd/missing')], root);
    expect(results.map((result) => result.outcome)).to.deep.equal(['deleted', 'not-found']);
    expect(existsSync(join(root, 'user', 'ab', 'file'))).to.equal(false);
  });

  it('refuses to delete through a symbolic link among the directories: the canary survives', async () => {
    symlinkSync(join(outside, 'user'), join(root, 'user'));
    const [result] = await storage.delete([pfn('user/ab/file')], root);
    expect(result).to.include({ outcome: 'failed', noAccess: false });
    expect(result)
      .to.have.property('reason')
      .match(/is a symbolic link/);
    expect(readFileSync(canary, 'utf8')).to.equal('canary');
  });

  it('removes a link in the file’s place, never the file it points to', async () => {
    mkdirSync(join(root, 'user', 'ab'), { recursive: true });
    symlinkSync(canary, join(root, 'user', 'ab', 'file'));
    const [result] = await storage.delete([pfn('user/ab/file')], root);
    expect(result).to.include({ outcome: 'deleted' });
    expect(() => lstatSync(join(root, 'user', 'ab', 'file'))).to.throw(/ENOENT/);
    expect(readFileSync(canary, 'utf8')).to.equal('canary');
  });

  it('refuses a PFN outside the prefix, one that climbs with .., a prefix that is not normalised, and none', async () => {
    const results = [
      ...(await storage.delete([`file://localhost${canary}`, `file://localhost${root}/../outside/user/ab/file`], root)),
      ...(await storage.delete([pfn('user/ab/file')], `${root}/../outside`)),
      ...(await storage.delete([pfn('user/ab/file')], null)),
    ];
    expect(results.map((result) => result.outcome)).to.deep.equal(['failed', 'failed', 'failed', 'failed']);
    const reasons = results.map((result) => ('reason' in result ? result.reason : ''));
    expect(reasons[0]).to.match(/is not below the prefix/);
    expect(reasons[1]).to.match(/climbs out of its prefix/);
    expect(reasons[2]).to.match(/not an absolute normalised path/);
    expect(reasons[3]).to.match(/no file protocol prefix/);
    expect(readFileSync(canary, 'utf8')).to.equal('canary');
  });
});
