import { expect } from 'chai';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { createRse, getRse, rseName, selected } from './rseSupport.ts';

describe('API: RSEs', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  it('creates an RSE with Rucio defaults and shows its settings and record', async () => {
    const name = await createRse(server, { city: 'Geneva', country_name: 'Switzerland', latitude: 46.2, ISP: 'CERN' });
    const detail = await getRse(server, name);
    expect(detail).to.deep.include({
      rse: name,
      rse_type: 'DISK',
      deterministic: true,
      volatile: false,
      staging_area: false,
      availability_read: true,
      availability_write: true,
      availability_delete: true,
      availability: 7,
      lfn2pfn_algorithm: 'hash',
      verify_checksum: true,
      credentials: null,
      sign_url: null,
      domain: ['lan', 'wan'],
      protocols: [],
      city: 'Geneva',
      latitude: 46.2,
      ISP: 'CERN',
    });
    expect(detail.id).to.match(/^[0-9a-f]{32}$/);
    const attributes = expectStatus(await server.root('GET', `/rses/${name}/attr/`), 200).json();
    expect(attributes).to.deep.equal({ [name]: true, ISP: 'CERN', city: 'Geneva', country_name: 'Switzerland' });
    const usage = expectStatus(await server.root('GET', `/rses/${name}/usage`), 200).lines<Record<string, unknown>>();
    expect(usage).to.have.length(1);
    expect(usage[0]).to.deep.include({
      source: 'rucio',
      used: 0,
      free: null,
      total: 0,
      files: 0,
      rse: name,
      rse_id: detail.id,
    });
  });

  it('takes availability as flags or as the deprecated bitmask, never both', async () => {
    const flags = await createRse(server, { availability_write: false, rse_type: 'TAPE', deterministic: false });
    expect(await getRse(server, flags)).to.deep.include({
      availability_write: false,
      availability: 5,
      rse_type: 'TAPE',
      deterministic: false,
    });
    const bitmask = await createRse(server, { availability: 4 });
    expect(await getRse(server, bitmask)).to.deep.include({
      availability_read: true,
      availability_write: false,
      availability_delete: false,
    });
    const both = rseName();
    expectError(
      await server.root('POST', `/rses/${both}`, { body: { availability: 7, availability_read: true } }),
      422,
      'InputValidationError',
      /can not be specified with/,
    );
    expectError(
      await server.root('GET', `/rses/${both}`),
      404,
      'RSENotFound',
      new RegExp(`RSE '${both}' cannot be found in vo 'def'`),
    );
  });

  it('refuses bad names, duplicates, bad bodies and wrong types, creating nothing', async () => {
    const name = await createRse(server);
    expectError(
      await server.root('POST', `/rses/${name}`),
      409,
      'Duplicate',
      new RegExp(`RSE '${name}' already exists!`),
    );
    expectError(await server.root('POST', '/rses/lower_case'), 400, 'InvalidObject', /Problem validating rse/);
    expectError(await server.root('POST', '/rses/A__B'), 400, 'InvalidObject');
    const other = rseName();
    expectError(
      await server.root('POST', `/rses/${other}`, { body: '{"city": ' }),
      400,
      'ValueError',
      /cannot decode json parameter dictionary/,
    );
    expectError(
      await server.root('POST', `/rses/${other}`, { body: [1] }),
      400,
      'TypeError',
      /body must be a json dictionary/,
    );
    expectError(
      await server.root('POST', `/rses/${other}`, { body: { rse_type: 'FLOPPY' } }),
      400,
      'InvalidObject',
      /rse_type/,
    );
    expectError(
      await server.root('POST', `/rses/${other}`, { body: { deterministic: 'maybe' } }),
      400,
      'TypeError',
      /'deterministic' must be a boolean type/,
    );
    expectError(
      await server.root('POST', `/rses/${other}`, { body: { latitude: 'north' } }),
      400,
      'InvalidObject',
      /latitude/,
    );
    expectError(
      await server.root('POST', `/rses/${other}`, { body: { availability: 9 } }),
      400,
      'InvalidObject',
      /availability/,
    );
    expectError(await server.root('GET', `/rses/${other}`), 404, 'RSENotFound');
  });

  it('updates the record (answering 201, as Rucio does) and refuses what may not change', async () => {
    const name = await createRse(server, { city: 'Geneva' });
    expectStatus(
      await server.root('PUT', `/rses/${name}`, {
        body: { city: 'Meyrin', availability_delete: false, qos_class: 'fast' },
      }),
      201,
    );
    expect(await getRse(server, name)).to.deep.include({
      city: 'Meyrin',
      availability_delete: false,
      availability: 6,
      qos_class: 'fast',
    });
    expect(expectStatus(await server.root('GET', `/rses/${name}/attr/`), 200).json()).to.deep.include({
      city: 'Meyrin',
    });
    expectStatus(await server.root('PUT', `/rses/${name}`, { body: { availability: 7, qos_class: 'None' } }), 201);
    expect(await getRse(server, name)).to.deep.include({ availability: 7, qos_class: null });
    expectError(
      await server.root('PUT', `/rses/${name}`, { body: { ISP: 'x' } }),
      400,
      'InputValidationError',
      /The key 'ISP' does not exist for RSE properties./,
    );
    expectError(
      await server.root('PUT', `/rses/${name}`, { body: { name: 'OTHER' } }),
      400,
      'InputValidationError',
      /Renaming/,
    );
    expectError(await server.root('PUT', `/rses/${name}`, { body: { volatile: 'x' } }), 400, 'TypeError');
    expectError(await server.root('PUT', `/rses/${rseName()}`, { body: { city: 'x' } }), 404, 'RSENotFound');
    expect(await getRse(server, name)).to.deep.include({ city: 'Meyrin', volatile: false });
  });

  it('sets, lists and deletes attributes', async () => {
    const name = await createRse(server);
    expectStatus(await server.root('POST', `/rses/${name}/attr/tier`, { body: { value: 1 } }), 201);
    expectStatus(await server.root('POST', `/rses/${name}/attr/tape_backed`, { body: { value: 'True' } }), 201);
    expectStatus(await server.root('POST', `/rses/${name}/attr/site`, { body: { value: 'CERN-PROD' } }), 201);
    expectStatus(await server.root('POST', `/rses/${name}/attr/site`, { body: { value: 'CERN' } }), 201);
    expect(expectStatus(await server.root('GET', `/rses/${name}/attr/`), 200).json()).to.deep.equal({
      [name]: true,
      site: 'CERN',
      tape_backed: true,
      tier: '1',
    });
    expectStatus(await server.root('DELETE', `/rses/${name}/attr/site`), 200);
    expectError(
      await server.root('DELETE', `/rses/${name}/attr/site`),
      404,
      'RSEAttributeNotFound',
      /RSE attribute 'site' cannot be found/,
    );
    expectError(
      await server.root('POST', `/rses/${name}/attr/x`, { body: {} }),
      400,
      'KeyError',
      /'value' not defined/,
    );
    expectError(await server.root('POST', `/rses/${name}/attr/x`, { body: { value: { a: 1 } } }), 400, 'InvalidObject');
    expectError(await server.root('POST', `/rses/${rseName()}/attr/x`, { body: { value: 'y' } }), 404, 'RSENotFound');
    expectError(await server.root('GET', `/rses/${rseName()}/attr/`), 404, 'RSENotFound');
    expect(expectStatus(await server.root('GET', `/rses/${name}/attr/`), 200).json()).to.deep.equal({
      [name]: true,
      tape_backed: true,
      tier: '1',
    });
    expectStatus(await server.root('GET', `/rses/${name}/attr`), 308);
  });

  it('lists RSEs and evaluates expressions over them', async () => {
    const tag = rseName('TAG').toLowerCase();
    const [disk, tape, scratch] = [
      await createRse(server, { country_name: 'FR' }),
      await createRse(server, { rse_type: 'TAPE' }),
      await createRse(server, { availability_write: false }),
    ];
    for (const [name, value] of [
      [disk, '1'],
      [tape, '1'],
      [scratch, '2'],
    ] as const) {
      expectStatus(await server.root('POST', `/rses/${name}/attr/${tag}`, { body: { value } }), 201);
    }
    const listed = expectStatus(await server.root('GET', '/rses/'), 200);
    expect(listed.headers['content-type']).to.equal('application/x-json-stream');
    const entry = listed.lines<Record<string, unknown>>().find((line) => line.rse === disk);
    expect(entry).to.deep.include({
      rse: disk,
      rse_type: 'DISK',
      availability: 7,
      deleted: false,
      vo: 'def',
      country_name: 'FR',
    });
    expect(await selected(server, `${tag}=1`)).to.deep.equal([disk, tape].sort());
    expect(await selected(server, `${tag}=1&rse_type=TAPE`)).to.deep.equal([tape]);
    expect(await selected(server, `${tag}=1|${scratch}`)).to.deep.equal([disk, tape, scratch].sort());
    expect(await selected(server, `${tag}>1`)).to.deep.equal([scratch]);
    expect(await selected(server, `(${tag}=1|${tag}=2)\\availability_write=false`)).to.deep.equal([disk, tape].sort());
    // Left to right: (disk|tape)&tag=2 selects nothing; an & binding tighter would select disk.
    expectError(
      await server.root('GET', `/rses/?expression=${encodeURIComponent(`${disk}|${tape}&${tag}=2`)}`),
      400,
      'InvalidRSEExpression',
      /empty set/,
    );
  });

  it('answers bad expressions with 400 InvalidRSEExpression', async () => {
    expectError(
      await server.root('GET', '/rses/?expression=(ABC'),
      400,
      'InvalidRSEExpression',
      /^Problem with parentheses.$/,
    );
    expectError(
      await server.root('GET', `/rses/?expression=${encodeURIComponent('A||B')}`),
      400,
      'InvalidRSEExpression',
      /does not comply to RSE Expression syntax/,
    );
    expectError(
      await server.root('GET', `/rses/?expression=${rseName()}`),
      400,
      'InvalidRSEExpression',
      /resulted in an empty set/,
    );
    expectError(
      await server.root('GET', '/rses/?expression=rse_type%3DFLOPPY'),
      400,
      'InvalidObject',
      /Invalid rse_type/,
    );
    expectError(
      await server.root('GET', '/rses/', { headers: { Accept: 'application/json' } }),
      406,
      'UnsupportedRequestedContentType',
    );
  });

  it('deletes (disables) an empty RSE: gone from listings and expressions, its name not reusable', async () => {
    const name = await createRse(server);
    expectStatus(
      await server.root('PUT', `/rses/${name}/usage`, { body: { source: 'rucio', used: 10, free: 0, files: 1 } }),
      200,
    );
    expectError(
      await server.root('DELETE', `/rses/${name}`),
      404,
      'RSEOperationNotSupported',
      new RegExp(`RSE '${name}' is not empty`),
    );
    expect(await selected(server, name)).to.deep.equal([name]);
    expectStatus(
      await server.root('PUT', `/rses/${name}/usage`, { body: { source: 'rucio', used: 0, free: 0, files: 0 } }),
      200,
    );
    expectStatus(await server.root('DELETE', `/rses/${name}`), 200);
    expectError(await server.root('GET', `/rses/${name}`), 404, 'RSENotFound');
    expectError(await server.root('GET', `/rses/?expression=${name}`), 400, 'InvalidRSEExpression', /empty set/);
    const all = expectStatus(await server.root('GET', '/rses/'), 200).lines<{ rse: string }>();
    expect(all.map((line) => line.rse)).not.to.include(name);
    expectError(await server.root('DELETE', `/rses/${name}`), 404, 'RSENotFound');
    expectError(await server.root('POST', `/rses/${name}`), 409, 'Duplicate');
    expectError(await server.root('POST', `/rses/${name}/attr/a`, { body: { value: 'b' } }), 404, 'RSENotFound');
  });

  it('leaves RSE changes to admins, and RSE usage to root', async () => {
    const { token } = await server.createUser();
    const admin = await server.createUser({ admin: true });
    const name = rseName();
    expectError(await server.call('POST', `/rses/${name}`, { token }), 401, 'AccessDenied', /can not add RSE/);
    expectStatus(await server.call('POST', `/rses/${name}`, { token: admin.token }), 201);
    expectError(await server.call('PUT', `/rses/${name}`, { token, body: { city: 'x' } }), 401, 'AccessDenied');
    expectError(
      await server.call('POST', `/rses/${name}/attr/a`, { token, body: { value: 'b' } }),
      401,
      'AccessDenied',
    );
    expectError(await server.call('DELETE', `/rses/${name}`, { token }), 401, 'AccessDenied');
    expectError(
      await server.call('PUT', `/rses/${name}/usage`, { token: admin.token, body: { source: 'storage', used: 1 } }),
      401,
      'AccessDenied',
    );
    expectStatus(await server.call('GET', `/rses/${name}`, { token }), 200);
    expectStatus(await server.call('GET', '/rses/', { token }), 200);
    expect(await getRse(server, name)).to.deep.include({ city: null });
  });
});
