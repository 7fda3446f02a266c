import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { geoLocator, GeoLocatorInvalid } from '../../infra/geoLocator.ts';
import { silentLogger } from '../../infra/logger.ts';
import { eventually } from '../support/eventually.ts';
import { mmdbFile } from '../support/mmdbFile.ts';
import { makeTempDir } from '../support/tempDir.ts';

/** The MaxMind reader behind `geoip` sorting, on database files the test writes. */
describe('GeoIP locator', () => {
  const temp = makeTempDir('geoip-');
  after(() => temp.dispose());
  const geneva = { network: '10.1.0.0/16', latitude: 46.23, longitude: 6.05 };

  it('locates IPv4 addresses, IPv4-mapped ones too, and nothing else', () => {
    const path = join(temp.path, 'city.mmdb');
    writeFileSync(path, mmdbFile([geneva]));
    const locator = geoLocator(path, silentLogger());
    expect(locator.locate('10.1.2.3')).to.deep.equal({ latitude: 46.23, longitude: 6.05 });
    expect(locator.locate('::ffff:10.1.2.3')).to.deep.equal({ latitude: 46.23, longitude: 6.05 });
    for (const elsewhere of ['10.2.0.1', '2001:db8::1', 'eos.example.org', ''])
      expect(locator.locate(elsewhere), elsewhere).to.equal(null);
  });

  it('reads the database again when the file is replaced', async () => {
    const path = join(temp.path, 'updated.mmdb');
    writeFileSync(path, mmdbFile([geneva]));
    const locator = geoLocator(path, silentLogger());
    writeFileSync(
      path,
      mmdbFile([
        { ...geneva, latitude: 1, longitude: 2 },
        { network: '10.2.0.0/16', latitude: 3, longitude: 4 },
      ]),
    );
    await eventually(() => locator.locate('10.2.0.1') !== null, 5000, 'the new database read');
    expect(locator.locate('10.1.2.3')).to.deep.equal({ latitude: 1, longitude: 2 });
  });

  it('locates nothing without a database, and refuses a file that is none', () => {
    expect(geoLocator(undefined, silentLogger()).locate('10.1.2.3')).to.equal(null);
    const path = join(temp.path, 'not.mmdb');
    writeFileSync(path, 'not a database');
    expect(() => geoLocator(path, silentLogger())).to.throw(GeoLocatorInvalid, /DMS_GEOIP_DB=.*not a MaxMind database/);
  });
});
