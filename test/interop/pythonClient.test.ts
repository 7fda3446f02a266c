import { markRequestsSubmitting } from '../../commands/request/submissionStep.ts';
import { expect } from 'chai';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { uniqueName } from '../support/events.ts';
import { ROOT_PASSWORD, ROOT_USERNAME, startTestServer, type TestServer } from '../support/server.ts';
import { sshKeyPair } from '../support/sshKeys.ts';
import { silentLogger } from '../../infra/logger.ts';
import { createTransferTools } from '../../infra/transfer/transferTools.ts';
import { kronosRole } from '../../workers/trace/kronosRole.ts';
import { createWorkerContext } from '../../workers/workerContext.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { recordSubmissions, recordTransferReports } from '../../commands/request/conveyorSteps.ts';
import { finishRequests } from '../../commands/request/requestFinishing.ts';
import { activeRequestStreams } from '../support/requests.ts';
import {
  checkStockClient,
  CLIENT_PYTHON,
  CLIENT_PYTHONPATH,
  makeRucioHome,
  renamedClientPath,
  rucioConfig,
  run,
  SKIP_REASON,
  type Run,
} from './rucioClient.ts';
import { skipBecause } from '../support/skip.ts';

/**
 * Runs the real Rucio 39 Python client against the service (test/interop/rucioClient.ts says how
 * to point it at one), twice: the stock client, unmodified, against a server in the
 * DMS_CLIENT_HEADERS=rucio mode, and a copy renamed at test time (X-Rucio- to X-Svc-) against
 * a server in the default mode. Without RUCIO_CLIENT_PYTHONPATH the test says so and is skipped.
 */
type Variant = Readonly<{ title: string; environment: Record<string, string>; renamed: boolean }>;

const VARIANTS: readonly Variant[] = [
  { title: 'the stock client, DMS_CLIENT_HEADERS=rucio', environment: { DMS_CLIENT_HEADERS: 'rucio' }, renamed: false },
  { title: 'a copy renamed X-Rucio- to X-Svc-, the default headers', environment: {}, renamed: true },
];

const clientSuite = (variant: Variant, stockPath: string): void => {
  let server: TestServer;
  let pythonPath = stockPath;
  let disposeRenamed = (): void => undefined;
  // The S3 RSE whose keys the server's RSE accounts file holds (signed URLs).
  const signingRse = uniqueName('PY_S3_').toUpperCase();
  const keys = makeTempDir('rse-accounts-');
  before(async () => {
    checkStockClient(stockPath);
    if (variant.renamed) ({ pythonPath, dispose: disposeRenamed } = renamedClientPath(stockPath));
    const accounts = join(keys.path, 'rse-accounts.cfg');
    writeFileSync(
      accounts,
      JSON.stringify({
        [signingRse]: { access_key: 'AKIDPY', secret_key: 'py-secret', signature_version: 's3v4', region: 'us-east-1' },
      }),
    );
    server = await startTestServer({ environment: { ...variant.environment, DMS_RSE_ACCOUNTS: accounts } });
  });
  after(async () => {
    await server?.stop();
    disposeRenamed();
    keys.dispose();
  });

  /** Runs a client script with a rucio.cfg for the server, in a directory of its own. */
  const runClient = async (testServer: TestServer, script: string): Promise<Run> => {
    const home = makeRucioHome(rucioConfig(testServer.url, ROOT_USERNAME, ROOT_PASSWORD), pythonPath);
    try {
      return await run(CLIENT_PYTHON, ['-c', script], {
        env: { ...process.env, RUCIO_HOME: home.path, PYTHONPATH: pythonPath, TMPDIR: home.path },
        cwd: home.path,
      });
    } finally {
      home.dispose();
    }
  };

  it('manages accounts, identities, scopes and configuration', async () => {
    const account = uniqueName('py');
    const result = await runClient(
      server,
      `
from rucio.client import Client
from rucio.common.exception import AccountNotFound, Duplicate, AccessDenied
c = Client()
assert c.ping() == {'version': '39.0.0rc1'}
assert c.whoami()['account'] == 'root'
assert c.add_account('${account}', 'USER', '${account}@example.org')
info = c.get_account('${account}')
assert info['status'] == 'ACTIVE' and info['account_type'] == 'USER', info
assert '${account}' in [a['account'] for a in c.list_accounts()]
try:
    c.add_account('${account}', 'USER', 'x@example.org')
    raise SystemExit('duplicate accepted')
except Duplicate:
    pass
c.add_scope('${account}', 'user.${account}')
assert c.list_scopes_for_account('${account}') == ['user.${account}']
c.add_identity('${account}', '${account}_login', 'USERPASS', 'e@example.org', password='pw', default=True)
assert {'type': 'USERPASS', 'identity': '${account}_login', 'email': 'e@example.org'} in list(c.list_identities('${account}'))
c.add_account_attribute('${account}', 'site', 'CERN')
assert {'key': 'site', 'value': 'CERN'} in next(iter(c.list_account_attributes('${account}')))
c.delete_account_attribute('${account}', 'site')
c.set_config_option('${account}', 'answer', 42)
assert c.get_config('${account}', 'answer') == 42
c.delete_config_option('${account}', 'answer')
c.update_account('${account}', 'email', 'new@example.org')
assert c.get_account('${account}')['email'] == 'new@example.org'
try:
    c.get_account('nobody-at-all')
    raise SystemExit('missing account found')
except AccountNotFound:
    pass
c.del_identity('${account}', '${account}_login', 'USERPASS')
assert c.delete_account('${account}')
assert '${account}' not in [a['account'] for a in c.list_accounts()]
print('ok')
`,
    );
    expect(result.status, `${result.stdout}\n${result.stderr}`).to.equal(0);
    expect(result.stdout.trim()).to.equal('ok');
  });

  it('builds RSEs with attributes, protocols, distances and quotas, lists them by expression, maps PFNs, exports and imports', async () => {
    const suffix = uniqueName('').toUpperCase();
    const [disk, tape, copy] = [`PY_DISK_${suffix}`, `PY_TAPE_${suffix}`, `PY_COPY_${suffix}`];
    const account = uniqueName('py');
    const result = await runClient(
      server,
      `
import math
from rucio.client import Client
from rucio.common.exception import (AccessDenied, Duplicate, InvalidObject, InvalidRSEExpression, RSENotFound,
    RSEProtocolNotSupported, RSEProtocolPriorityError, RSEAttributeNotFound, InputValidationError)
c = Client()
assert c.add_rse('${disk}', city='Geneva', country_name='Switzerland', availability_delete=False)
assert c.add_rse('${tape}', rse_type='TAPE', deterministic=False)
for bad, error in (('${disk}', Duplicate), ('lower', InvalidObject)):
    try:
        c.add_rse(bad)
        raise SystemExit('bad RSE accepted: ' + bad)
    except error:
        pass
rse = c.get_rse('${disk}')
assert rse['rse'] == '${disk}' and rse['availability_delete'] is False and rse['availability'] == 6 and rse['lfn2pfn_algorithm'] == 'hash', rse
assert c.update_rse('${disk}', {'availability_delete': True, 'city': 'Meyrin'})
assert c.get_rse('${disk}')['availability'] == 7
try:
    c.update_rse('${disk}', {'ISP': 'x'})
    raise SystemExit('immutable property changed')
except InputValidationError:
    pass
assert c.add_rse_attribute('${disk}', 'tier', '1')
assert c.add_rse_attribute('${tape}', 'tier', '1')
attributes = c.list_rse_attributes('${disk}')
assert attributes['${disk}'] is True and attributes['tier'] == '1' and attributes['city'] == 'Meyrin', attributes
assert c.delete_rse_attribute('${disk}', 'city')
try:
    c.delete_rse_attribute('${disk}', 'city')
    raise SystemExit('missing attribute deleted')
except RSEAttributeNotFound:
    pass
assert sorted(r['rse'] for r in c.list_rses('tier=1&(${disk}|${tape})')) == sorted(['${disk}', '${tape}'])
assert [r['rse'] for r in c.list_rses('tier=1&rse_type=TAPE')] == ['${tape}']
assert '${disk}' in [r['rse'] for r in c.list_rses()]
try:
    list(c.list_rses('tier=1&('))
    raise SystemExit('bad expression accepted')
except InvalidRSEExpression:
    pass
domains = {'lan': {'read': 1, 'write': 1, 'delete': 1}, 'wan': {'read': 1, 'write': 1, 'delete': 1, 'third_party_copy_read': 1, 'third_party_copy_write': 1}}
assert c.add_protocol('${disk}', {'scheme': 'https', 'hostname': 'eos.example.org', 'port': 443, 'prefix': '/eos/data', 'impl': 'rucio.rse.protocols.webdav.Default', 'domains': domains})
assert c.add_protocol('${disk}', {'scheme': 'root', 'hostname': 'xrd.example.org', 'port': 1094, 'prefix': '//atlas', 'impl': 'rucio.rse.protocols.xrootd.Default', 'domains': {'wan': {'read': 2, 'write': 2}}})
try:
    c.add_protocol('${disk}', {'scheme': 'https', 'hostname': 'eos.example.org', 'port': 443, 'impl': 'x'})
    raise SystemExit('duplicate protocol accepted')
except Duplicate:
    pass
try:
    c.add_protocol('${disk}', {'scheme': 'davs', 'impl': 'x', 'domains': {'wan': {'read': -1}}})
    raise SystemExit('negative priority accepted')
except RSEProtocolPriorityError:
    pass
assert len(c.get_protocols('${disk}')) == 2
assert c.swap_protocols('${disk}', 'wan', 'read', 'https', 'root')
protocols = {p['scheme']: p for p in c.get_protocols('${disk}', scheme='https')['protocols']}
assert protocols['root']['domains']['wan']['read'] == 1 and protocols['https']['domains']['wan']['read'] == 2, protocols
pfns = c.lfns2pfns('${disk}', ['user.jdoe:file1'], operation='read')
assert pfns == {'user.jdoe:file1': 'root://xrd.example.org:1094//atlas/user/jdoe/a2/cb/file1'}, pfns
pfns = c.lfns2pfns('${disk}', ['user.jdoe:file1'], scheme='https', protocol_domain='wan', operation='write')
assert pfns == {'user.jdoe:file1': 'https://eos.example.org:443/eos/data/user/jdoe/a2/cb/file1'}, pfns
assert c.update_protocols('${disk}', 'root', {'prefix': '/xrd'}, hostname='xrd.example.org', port=1094)
assert c.delete_protocols('${disk}', 'root', hostname='xrd.example.org', port=1094)
try:
    c.get_protocols('${tape}')
    raise SystemExit('protocols of a bare RSE found')
except RSEProtocolNotSupported:
    pass
assert c.add_distance('${disk}', '${tape}', {'distance': 4})
assert c.get_distance('${disk}', '${tape}')[0]['distance'] == 4
assert c.update_distance('${disk}', '${tape}', {'distance': 5})
assert c.get_distance('${disk}', '${tape}')[0]['ranking'] == 5
assert c.set_rse_usage('${disk}', 'storage', 100, 900, files=3)
usage = {u['source']: u for u in c.get_rse_usage('${disk}')}
assert usage['storage']['total'] == 1000 and usage['rucio']['used'] == 0, usage
assert [u['used'] for u in c.list_rse_usage_history('${disk}', filters={'source': 'storage'})] == [100]
assert c.set_rse_limits('${disk}', 'MinFreeSpace', 50)
assert c.get_rse_limits('${disk}') == {'MinFreeSpace': 50}
assert c.delete_rse_limits('${disk}', 'MinFreeSpace')
assert c.add_qos_policy('${disk}', 'SSD')
assert c.list_qos_policies('${disk}') == ['SSD']
assert c.delete_qos_policy('${disk}', 'SSD')
assert c.add_account('${account}', 'USER', '${account}@example.org')
assert c.set_local_account_limit('${account}', '${disk}', 1000)
assert c.set_account_limit('${account}', '${tape}', -1, 'local')
assert c.set_global_account_limit('${account}', 'tier=1&(${disk}|${tape})', 2000)
limits = c.get_local_account_limits('${account}')
assert limits == {'${disk}': 1000, '${tape}': math.inf}, limits
assert c.get_local_account_limit('${account}', '${disk}') == {'${disk}': 1000}
assert c.get_global_account_limit('${account}', 'tier=1&(${disk}|${tape})') == {'tier=1&(${disk}|${tape})': 2000}
usage = {u['rse']: u for u in c.get_local_account_usage('${account}')}
assert usage['${tape}']['bytes_remaining'] == math.inf and usage['${disk}']['bytes_limit'] == 1000, usage
assert [u['bytes_limit'] for u in c.get_global_account_usage('${account}')] == [2000]
assert c.get_account_usage_history('${account}', '${disk}') == []
try:
    c.set_local_account_limit('${account}', 'NO_SUCH_RSE', 1)
    raise SystemExit('limit on a missing RSE accepted')
except RSENotFound:
    pass
assert c.delete_local_account_limit('${account}', '${disk}')
assert c.delete_global_account_limit('${account}', 'tier=1&(${disk}|${tape})')
exported = c.export_data()
assert exported['rses']['${disk}']['protocols'][0]['scheme'] == 'https'
assert exported['distances']['${disk}']['${tape}']['distance'] == 5
data = {'rses': {'${copy}': dict(exported['rses']['${disk}'])}, 'accounts': [{'account': '${account}', 'email': 'new@example.org', 'identities': [{'type': 'USERPASS', 'identity': '${account}_login', 'password': 'pw'}]}]}
assert c.import_data(data)
assert c.get_rse('${copy}')['protocols'] == c.get_rse('${disk}')['protocols']
assert c.get_account('${account}')['email'] == 'new@example.org'
assert c.delete_distance('${disk}', '${tape}')
assert c.delete_rse('${tape}')
try:
    c.get_rse('${tape}')
    raise SystemExit('deleted RSE found')
except RSENotFound:
    pass
print('ok')
`,
    );
    expect(result.status, `${result.stdout}\n${result.stderr}`).to.equal(0);
    expect(result.stdout.trim()).to.equal('ok');
  });

  it('builds, attaches, closes, searches and describes DIDs and metadata conventions', async () => {
    const scope = uniqueName('py.');
    const key = uniqueName('key');
    expect((await server.root('POST', `/scopes/root/${scope}`)).status).to.equal(201);
    const mock = `PY_${uniqueName('').toUpperCase()}_MOCK`;
    const result = await runClient(
      server,
      `
from rucio.client import Client
from rucio.common.exception import DataIdentifierAlreadyExists, DataIdentifierNotFound, FileConsistencyMismatch, InvalidMetadata, UnsupportedOperation, InvalidValueForKey
c = Client()
s = '${scope}'
assert c.add_rse('${mock}')
assert c.add_replicas('${mock}', [{'scope': s, 'name': 'file1', 'bytes': 10, 'adler32': '0cc737eb', 'meta': {'guid': '8afc4f3e-2e4d-4c4b-9f16-7d3d2a1b0c9e'}}, {'scope': s, 'name': 'file2', 'bytes': 20, 'adler32': '0cc737eb'}])
assert c.add_container(s, 'cont', meta={'project': 'proj'})
assert c.add_dataset(s, 'ds', files=[{'scope': s, 'name': 'file1', 'bytes': 10}], lifetime=3600)
c.add_datasets([{'scope': s, 'name': 'ds2'}])
assert c.attach_dids(s, 'cont', [{'scope': s, 'name': 'ds'}, {'scope': s, 'name': 'ds2'}])
assert c.attach_dids_to_dids([{'scope': s, 'name': 'ds', 'dids': [{'scope': s, 'name': 'file1'}, {'scope': s, 'name': 'file2'}]}], ignore_duplicate=True)
try:
    c.add_dataset(s, 'ds')
    raise SystemExit('duplicate accepted')
except DataIdentifierAlreadyExists:
    pass
try:
    c.attach_dids(s, 'ds2', [{'scope': s, 'name': 'file1', 'bytes': 11}])
    raise SystemExit('inconsistent file accepted')
except FileConsistencyMismatch:
    pass
try:
    c.attach_dids(s, 'cont', [{'scope': s, 'name': 'file1'}])
    raise SystemExit('file in container accepted')
except UnsupportedOperation:
    pass
assert sorted(d['name'] for d in c.list_content(s, 'cont')) == ['ds', 'ds2']
assert [p['name'] for p in c.list_parent_dids(s, 'ds')] == ['cont']
assert sorted(f['name'] for f in c.list_files(s, 'cont')) == ['file1', 'file2']
assert [f['parent_name'] for f in c.bulk_list_files([{'scope': s, 'name': 'ds'}])] == ['ds', 'ds']
assert list(c.get_dataset_by_guid('8afc4f3e2e4d4c4b9f167d3d2a1b0c9e')) == [{'scope': s, 'name': 'ds'}]
assert c.get_did(s, 'cont', dynamic_depth='FILE')['bytes'] == 30
assert c.close(s, 'ds')
ds = c.get_did(s, 'ds')
assert ds['open'] is False and ds['length'] == 2 and ds['bytes'] == 30, ds
c.set_metadata(s, 'ds', 'campaign', 'mc23')
c.set_metadata_bulk(s, 'ds2', {'colour': 'red', 'run_number': 3})
c.set_dids_metadata_bulk([{'scope': s, 'name': 'ds', 'meta': {'colour': 'blue'}}])
assert c.get_metadata(s, 'ds')['campaign'] == 'mc23'
assert c.get_metadata(s, 'ds', plugin='JSON') == {'colour': 'blue'}
assert [m['colour'] for m in c.get_metadata_bulk([{'scope': s, 'name': 'ds'}, {'scope': s, 'name': 'ds2'}])] == ['blue', 'red']
c.delete_metadata(s, 'ds', 'colour')
assert c.get_metadata(s, 'ds', plugin='JSON') == {}
try:
    c.set_metadata(s, 'ds', 'a.b', 1)
    raise SystemExit('dotted key accepted')
except InvalidMetadata:
    pass
assert sorted(c.list_dids(s, [{'name': 'ds*'}])) == ['ds', 'ds2']
assert list(c.list_dids(s, [{'name': '*', 'length.gt': 1}], did_type='all')) == ['cont', 'ds']
assert list(c.list_dids(s, {'colour': 'red'})) == ['ds2']
long = list(c.list_dids(s, [{'name': 'file*'}], did_type='file', long=True))
assert long == [{'scope': s, 'name': 'file1', 'did_type': 'FILE', 'bytes': 10, 'length': None}, {'scope': s, 'name': 'file2', 'did_type': 'FILE', 'bytes': 20, 'length': None}], long
assert sorted(d['name'] for d in c.scope_list(s)) == ['cont']
assert list(c.list_did_rules(s, 'ds')) == []
assert c.detach_dids(s, 'cont', [{'scope': s, 'name': 'ds2'}])
assert [d['name'] for d in c.list_content_history(s, 'cont')] == ['ds2']
assert c.create_did_sample(s, 'ds', s, 'sample', 1)
assert len(list(c.list_content(s, 'sample'))) == 1
try:
    c.get_did(s, 'nothing')
    raise SystemExit('missing DID found')
except DataIdentifierNotFound:
    pass
from rucio.client.metaconventionsclient import MetaConventionClient
m = MetaConventionClient()
assert m.add_key('${key}', 'DATASET', value_type=str)
assert m.add_value('${key}', 'AOD')
assert '${key}' in m.list_keys() and m.list_values('${key}') == ['AOD']
try:
    c.set_metadata(s, 'ds2', '${key}', 'ESD')
    raise SystemExit('value outside the convention accepted')
except InvalidValueForKey:
    pass
print('ok')
`,
    );
    expect(result.status, `${result.stdout}\n${result.stderr}`).to.equal(0);
    expect(result.stdout.trim()).to.equal('ok');
  });
  it('registers, lists, declares and updates replicas, and lists dataset replicas', async () => {
    const scope = uniqueName('py.');
    const suffix = uniqueName('').toUpperCase();
    const [disk, tape] = [`PY_DISK_${suffix}`, `PY_TAPE_${suffix}`];
    expect((await server.root('POST', `/scopes/root/${scope}`)).status).to.equal(201);
    const result = await runClient(
      server,
      `
from datetime import datetime, timedelta
from rucio.client import Client
from rucio.common.exception import AccessDenied, DataIdentifierNotFound, InvalidPath, ReplicaNotFound, UnsupportedOperation
from rucio.common.constants import HTTPMethod
from rucio.common.utils import build_url
c = Client()
s = '${scope}'
domains = {'lan': {'read': 1, 'write': 1, 'delete': 1}, 'wan': {'read': 1, 'write': 1, 'delete': 1, 'third_party_copy_read': 1, 'third_party_copy_write': 1}}
assert c.add_rse('${disk}')
assert c.add_protocol('${disk}', {'scheme': 'root', 'hostname': 'xrd-${suffix.toLowerCase()}.example.org', 'port': 1094, 'prefix': '/data', 'impl': 'rucio.rse.protocols.xrootd.Default', 'domains': domains})
assert c.add_rse('${tape}', deterministic=False)
assert c.add_protocol('${tape}', {'scheme': 'root', 'hostname': 'tape-${suffix.toLowerCase()}.example.org', 'port': 1094, 'prefix': '/tape', 'impl': 'rucio.rse.protocols.xrootd.Default', 'domains': domains})
assert c.add_replicas('${disk}', [{'scope': s, 'name': 'f1', 'bytes': 10, 'adler32': '0cc737eb'}, {'scope': s, 'name': 'f2', 'bytes': 20, 'adler32': '0cc737eb', 'meta': {'events': 5}}])
assert c.add_replica('${tape}', s, 'f1', 10, '0cc737eb', pfn='root://tape-${suffix.toLowerCase()}.example.org:1094/tape/raw/f1')
assert c.add_replicas('${disk}', [{'scope': s, 'name': 'f1', 'bytes': 10, 'adler32': '0cc737eb'}])
try:
    c.add_replica('${disk}', s, 'f9', 1, '0cc737eb', pfn='root://xrd-${suffix.toLowerCase()}.example.org:1094/data/wrong/f9')
    raise SystemExit('wrong PFN accepted')
except InvalidPath:
    pass
assert c.add_dataset(s, 'ds', files=[{'scope': s, 'name': 'f1'}, {'scope': s, 'name': 'f2'}])
assert c.add_files_to_dataset(s, 'ds', [{'scope': s, 'name': 'f3', 'bytes': 30, 'adler32': '0cc737eb'}], rse='${disk}')
assert c.add_container(s, 'cont')
assert c.attach_dids(s, 'cont', [{'scope': s, 'name': 'ds'}])
files = list(c.list_replicas([{'scope': s, 'name': 'cont'}]))
assert sorted(f['name'] for f in files) == ['f1', 'f2', 'f3'], files
f1 = [f for f in files if f['name'] == 'f1'][0]
assert sorted(f1['rses']) == sorted(['${disk}', '${tape}']) and 'root://tape-${suffix.toLowerCase()}.example.org:1094/tape/raw/f1' in f1['pfns'], f1
assert [p['priority'] for p in f1['pfns'].values()] == [1, 2], f1
assert list(c.list_replicas([{'scope': s, 'name': 'f1'}], rse_expression='${tape}'))[0]['rses'] == {'${tape}': ['root://tape-${suffix.toLowerCase()}.example.org:1094/tape/raw/f1']}
metalink = c.list_replicas([{'scope': s, 'name': 'f2'}], metalink=True)
assert metalink.startswith('<?xml') and '<identity>%s:f2</identity>' % s in metalink, metalink
pfn2 = list(c.list_replicas([{'scope': s, 'name': 'f2'}]))[0]['pfns']
pfn2 = list(pfn2)[0]
assert list(c.get_did_from_pfns([pfn2], '${disk}')) == [{pfn2: {'scope': s, 'name': 'f2'}}]
assert c.declare_suspicious_file_replicas([pfn2], 'checksum') == {}
# The answer is one JSON list, which the client yields as one item (as with Rucio).
assert [r['name'] for r in next(c.list_suspicious_replicas(rse_expression='${disk}'))] == ['f2']
assert c.declare_bad_file_replicas([pfn2], 'lost') == {}
assert c.declare_bad_file_replicas([pfn2], 'lost') == {'${disk}': [pfn2 + ' Already declared']}
assert list(c.list_replicas([{'scope': s, 'name': 'f2'}]))[0]['pfns'] == {}
assert list(c.list_replicas([{'scope': s, 'name': 'f2'}], all_states=True))[0]['states'] == {'${disk}': 'BAD'}
url = build_url(c.host, path='replicas/bad/states', params={'state': 'B', 'rse': '${disk}'})
rows = list(c._load_json_data(c._send_request(url, method=HTTPMethod.GET)))
assert [(r['name'], r['state']) for r in rows] == [('f2', 'BAD')], rows
assert isinstance(rows[0]['created_at'], datetime), rows
assert c.update_replicas_states('${disk}', [{'scope': s, 'name': 'f2', 'state': 'A'}])
assert c.declare_bad_did_replicas('${disk}', [{'scope': s, 'name': 'f3'}, {'scope': s, 'name': 'nope'}], 'disk') == ['%s:nope Unknown replica' % s]
expires = (datetime.utcnow() + timedelta(days=1)).strftime('%Y-%m-%dT%H:%M:%S.%f')
assert c.add_bad_pfns([pfn2], 'downtime', 'TEMPORARY_UNAVAILABLE', expires)
assert list(c.list_replicas([{'scope': s, 'name': 'f2'}], all_states=True))[0]['states'] == {'${disk}': 'TEMPORARY_UNAVAILABLE'}
rows = {r['rse']: r for r in c.list_dataset_replicas(s, 'ds')}
assert rows['${disk}']['length'] == 3 and rows['${disk}']['available_length'] == 1 and rows['${disk}']['state'] == 'UNAVAILABLE', rows
assert isinstance(rows['${disk}']['created_at'], datetime), rows
deep = list(c.list_dataset_replicas(s, 'ds', deep=True))
assert sorted((r['rse'], r['available_length']) for r in deep) == sorted([('${disk}', 1), ('${tape}', 1)]), deep
assert len(list(c.list_dataset_replicas_bulk([{'scope': s, 'name': 'ds'}]))) == 2
assert [r['name'] for r in c.list_datasets_per_rse('${tape}')] == ['ds']
assert c.set_tombstone([{'rse': '${disk}', 'scope': s, 'name': 'f1'}])
try:
    c.set_tombstone([{'rse': '${disk}', 'scope': s, 'name': 'nope'}])
    raise SystemExit('tombstone on a missing replica')
except ReplicaNotFound:
    pass
try:
    c.update_replicas_states('${disk}', [{'scope': s, 'name': 'f1', 'state': 'T'}])
    c.update_replicas_states('${disk}', [{'scope': s, 'name': 'f3', 'state': 'T'}])
    raise SystemExit('a BAD replica became temporarily unavailable')
except UnsupportedOperation:
    pass
c.quarantine_replicas([{'path': '/data/dark/file', 'scope': s, 'name': 'dark'}], rse='${disk}')
try:
    c.delete_replicas('${disk}', [{'scope': s, 'name': 'f1'}])
    raise SystemExit('replicas deleted through the API')
except AccessDenied:
    pass
try:
    list(c.list_replicas([{'scope': s, 'name': 'f1'}], sort='closest'))
    raise SystemExit('unknown sorting accepted')
except Exception as error:
    assert 'SortingAlgorithmNotSupported' in type(error).__name__ or 'Sorting algorithm' in str(error), error
print('ok')
`,
    );
    expect(result.status, `${result.stdout}\n${result.stderr}`).to.equal(0);
    expect(result.stdout.trim()).to.equal('ok');
  });

  it('places, lists, updates, locks, refuses and deletes replication rules, with quotas, usage and dataset locks', async () => {
    const scope = uniqueName('py.');
    const suffix = uniqueName('').toUpperCase();
    const [source, target, other, extra] = [
      `PY_SRC_${suffix}`,
      `PY_DST_${suffix}`,
      `PY_OTHER_${suffix}`,
      `PY_EXTRA_${suffix}`,
    ];
    const user = uniqueName('py');
    expect((await server.root('POST', `/scopes/root/${scope}`)).status).to.equal(201);
    const result = await runClient(
      server,
      `
from datetime import datetime
from rucio.client import Client
from rucio.common.exception import (InsufficientAccountLimit, InsufficientTargetRSEs, InvalidRSEExpression, RuleNotFound, RucioException,
    UnsupportedOperation, DuplicateRule, AccessDenied)
c = Client()
s = '${scope}'
for rse in ('${source}', '${target}', '${other}', '${extra}'):
    assert c.add_rse(rse)
assert c.add_replicas('${source}', [{'scope': s, 'name': 'f1', 'bytes': 100, 'adler32': '0cc737eb'}, {'scope': s, 'name': 'f2', 'bytes': 100, 'adler32': '0cc737eb'}])
assert c.add_dataset(s, 'ds', files=[{'scope': s, 'name': 'f1'}, {'scope': s, 'name': 'f2'}])
dids = [{'scope': s, 'name': 'ds'}]

# A rule to the empty RSE replicates both files.
[rule_id] = c.add_replication_rule(dids, 1, '${target}', comment='for the test')
rule = c.get_replication_rule(rule_id)
assert rule['state'] == 'REPLICATING' and rule['locks_replicating_cnt'] == 2 and rule['locks_ok_cnt'] == 0, rule
assert rule['account'] == 'root' and rule['grouping'] == 'DATASET' and rule['comments'] == 'for the test', rule
assert isinstance(rule['created_at'], datetime) and rule['expires_at'] is None, rule
locks = sorted((l['name'], l['rse'], l['state']) for l in c.list_replica_locks(rule_id))
assert locks == [('f1', '${target}', 'REPLICATING'), ('f2', '${target}', 'REPLICATING')], locks
assert [r['id'] for r in c.list_did_rules(s, 'ds')] == [rule_id]
assert rule_id in [r['id'] for r in c.list_account_rules('root')]
assert [r['id'] for r in c.list_replication_rules({'scope': s, 'state': 'R'})] == [rule_id]
associated = list(c.list_associated_rules_for_file(s, 'f1'))
assert [r['id'] for r in associated] == [rule_id]
# The bytes of the DID the rule is on (the dataset's two files), as Rucio 39 adds them.
assert associated[0]['bytes'] == 200, associated
assert c.examine_replication_rule(rule_id) == {'rule_error': 'This replication rule is currently REPLICATING', 'transfers': []}
ds_locks = list(c.get_dataset_locks(s, 'ds'))
assert [(l['rse'], l['state'], l['rule_id']) for l in ds_locks] == [('${target}', 'REPLICATING', rule_id)], ds_locks
assert [l['name'] for l in c.get_dataset_locks_by_rse('${target}')] == ['ds']
assert [l['rse'] for l in c.get_locks_for_dids([{'scope': s, 'name': 'ds', 'type': 'dataset'}])] == ['${target}']
usage = list(c.get_local_account_usage('root', '${target}'))
assert usage[0]['bytes'] == 200 and usage[0]['files'] == 2, usage

# Options: a lifetime and a lock; a locked rule cannot be deleted.
assert c.update_replication_rule(rule_id, {'lifetime': 3600, 'locked': True})
rule = c.get_replication_rule(rule_id)
assert rule['locked'] is True and isinstance(rule['expires_at'], datetime), rule
try:
    c.delete_replication_rule(rule_id)
    raise SystemExit('a locked rule deleted')
except UnsupportedOperation:
    pass
try:
    c.update_replication_rule(rule_id, {'colour': 'red'})
    raise SystemExit('an unknown option accepted')
except Exception as error:
    assert type(error).__name__ == 'InputValidationError', error

# Refusals.
try:
    c.add_replication_rule(dids, 5, '${source}|${target}|${other}|${extra}')
    raise SystemExit('five copies on four RSEs accepted')
except InsufficientTargetRSEs:
    pass
try:
    c.add_replication_rule(dids, 1, 'NO_SUCH_RSE_${suffix}')
    raise SystemExit('an expression selecting nothing accepted')
except InvalidRSEExpression:
    pass
try:
    c.add_replication_rule(dids, 1, '${target}')
    raise SystemExit('a duplicate rule accepted')
except DuplicateRule:
    pass
try:
    c.get_replication_rule('0' * 32)
    raise SystemExit('a missing rule found')
except RuleNotFound:
    pass

# A user without quota is refused; with a quota the rule is his, and so is the usage.
assert c.add_account('${user}', 'USER', '${user}@example.org')
c.add_identity('${user}', '${user}_login', 'USERPASS', '${user}@example.org', password='pw-${user}', default=True)
u = Client(account='${user}', auth_type='userpass', creds={'username': '${user}_login', 'password': 'pw-${user}'})
assert u.whoami()['account'] == '${user}'
try:
    u.add_replication_rule(dids, 1, '${other}')
    raise SystemExit('a rule without quota accepted')
except InsufficientAccountLimit:
    pass
assert c.set_local_account_limit('${user}', '${other}', 1000)
[user_rule] = u.add_replication_rule(dids, 1, '${other}')
assert u.get_replication_rule(user_rule)['account'] == '${user}'
usage = list(u.get_local_account_usage('${user}', '${other}'))
assert usage[0]['bytes'] == 200 and usage[0]['bytes_remaining'] == 800, usage
try:
    u.update_replication_rule(user_rule, {'locked': True})
    raise SystemExit('a user changed a rule')
except AccessDenied:
    pass
try:
    u.delete_replication_rule(user_rule)
    raise SystemExit('a user deleted a rule')
except AccessDenied:
    pass

# Approval: a rule asking for it waits; denial deletes it.
[waiting] = u.add_replication_rule([{'scope': s, 'name': 'f1'}], 1, '${other}', ask_approval=True)
assert u.get_replication_rule(waiting)['state'] == 'WAITING_APPROVAL'
assert c.deny_replication_rule(waiting, reason='not now')
try:
    c.get_replication_rule(waiting)
    raise SystemExit('a denied rule found')
except RuleNotFound:
    pass

# Reduction: an OK rule of two copies down to one. Rucio answers 201 where its own client expects 200, so the
# client raises although the rule is reduced: the same here.
assert c.add_replicas('${extra}', [{'scope': s, 'name': 'f1', 'bytes': 100, 'adler32': '0cc737eb'}, {'scope': s, 'name': 'f2', 'bytes': 100, 'adler32': '0cc737eb'}])
[two] = c.add_replication_rule(dids, 2, '${source}|${extra}')
assert c.get_replication_rule(two)['state'] == 'OK'
try:
    c.reduce_replication_rule(two, 2)
    raise SystemExit('a reduction to as many copies accepted')
except Exception as error:
    assert type(error).__name__ == 'RuleReplaceFailed', error
try:
    c.reduce_replication_rule(two, 1, exclude_expression='${extra}')
    raise SystemExit('the client read the reduction')
except RucioException as error:
    assert 'http status code: 201' in str(error), error
reduced = [r for r in c.list_did_rules(s, 'ds') if r['rse_expression'] == '(${source}|${extra})\\\\(${extra})']
assert len(reduced) == 1 and reduced[0]['copies'] == 1 and reduced[0]['state'] == 'OK', list(c.list_did_rules(s, 'ds'))
[on_source] = c.add_replication_rule(dids, 1, '${source}')

# Move: the new rule replicates, the old one waits for it.
[moved] = c.move_replication_rule(on_source, '${other}|${target}', {'comment': 'moved'})
assert c.get_replication_rule(moved)['comments'] == 'moved'
assert c.get_replication_rule(on_source)['child_rule_id'] == moved

# History of the DID's rules, oldest first.
history = list(c.list_replication_rule_full_history(s, 'ds'))
assert [h['state'] for h in history if h['rule_id'] == rule_id][:1] == ['REPLICATING'], history
assert all(isinstance(h['updated_at'], datetime) for h in history), history

# Deletion once unlocked: the rule expires within the hour, purging its replicas.
assert c.update_replication_rule(rule_id, {'locked': False})
assert c.delete_replication_rule(rule_id, purge_replicas=True)
rule = c.get_replication_rule(rule_id)
assert rule['purge_replicas'] is True and (rule['expires_at'] - datetime.utcnow()).total_seconds() <= 3600, rule
print('ok')
`,
    );
    expect(result.status, `${result.stdout}\n${result.stderr}`).to.equal(0);
    expect(result.stdout.trim()).to.equal('ok');
  });
  it('reads transfer requests by DID and by link, active and archived, and sets, lists and deletes transfer limits (rules 22 and 24)', async () => {
    const scope = uniqueName('py.');
    const [source, target] = [uniqueName('PYSRC_').toUpperCase(), uniqueName('PYDST_').toUpperCase()];
    const call = (method: string, path: string, body?: unknown) =>
      server.root(method, path, body === undefined ? {} : { body });
    const domains = {
      lan: { read: 1, write: 1, delete: 1 },
      wan: { read: 1, write: 1, delete: 1, third_party_copy_read: 1, third_party_copy_write: 1 },
    };
    expect((await call('POST', `/scopes/root/${scope}`)).status).to.equal(201);
    for (const rse of [source, target]) {
      expect((await call('POST', `/rses/${rse}`, {})).status).to.equal(201);
      expect(
        (
          await call('POST', `/rses/${rse}/protocols/root`, {
            hostname: 'xrd.example.org',
            port: 1094,
            prefix: '/data',
            impl: 'rucio.rse.protocols.xrootd.Default',
            domains,
          })
        ).status,
      ).to.equal(201);
    }
    expect((await call('POST', '/dids', [{ scope, name: 'ds', type: 'DATASET' }])).status).to.equal(201);
    const files = ['f1', 'f2'].map((name) => ({ scope, name, bytes: 100, adler32: '0cc737eb' }));
    expect((await call('POST', `/dids/${scope}/ds/dids`, { rse: source, dids: files })).status).to.equal(201);
    expect(
      (await call('POST', '/rules/', { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: target })).status,
    ).to.equal(201);
    // The conveyor's steps, by hand: f1 arrives and is archived, f2 stays SUBMITTED.
    const { commands, progress } = server.runtime.services;
    const metadata = () => ({ now: new Date(), account: 'root', requestId: uniqueName('py-') });
    const settle = async (outcome: { position: bigint | undefined }) => {
      if (outcome.position !== undefined) await progress.waitFor(outcome.position, 5000);
    };
    const sourceId = (await call('GET', `/rses/${source}`)).json<{ id: string }>().id;
    const requestOf = async (name: string) =>
      (await call('GET', `/requests/${scope}/${name}/${target}`)).json<{ id: string }>().id;
    const [first, second] = [await requestOf('f1'), await requestOf('f2')];
    const streams = await activeRequestStreams(server.runtime.services.readModels, [first, second]);
    const submit = (requestId: string) => ({
      type: 'SubmitTransfer' as const,
      data: {
        requestId,
        sources: [{ rseId: sourceId, rse: source, ranking: 0, pfn: 'root://src/f' }],
        destUrl: 'root://dst/f',
        transfertool: 'mock',
      },
    });
    await settle(await markRequestsSubmitting(commands, [submit(first), submit(second)], streams, metadata()));
    await settle(
      await recordSubmissions(
        commands,
        [
          { requestId: first, externalId: 'job-1', externalHost: 'mock' },
          { requestId: second, externalId: 'job-2', externalHost: 'mock' },
        ],
        streams,
        metadata(),
      ),
    );
    const done = {
      type: 'RecordTransferReport' as const,
      data: {
        requestId: first,
        externalId: 'job-1',
        outcome: 'DONE' as const,
        reason: null,
        source: null,
        startedAt: null,
        finishedAt: null,
      },
    };
    await settle(await recordTransferReports(commands, [done], streams, metadata()));
    await settle(
      await finishRequests(
        commands,
        [{ type: 'MarkReplicaAvailable', data: { requestId: first } }],
        streams,
        metadata(),
      ),
    );
    const result = await runClient(
      server,
      `
from rucio.client import Client
c = Client()
active = c.list_request_by_did('f2', '${target}', scope='${scope}')
assert active['state'] == 'SUBMITTED' and active['id'] == '${second}' and active['external_id'] == 'job-2', active
assert [r['id'] for r in c.list_requests('${source}', '${target}', 'S')] == ['${second}']
archived = c.list_request_history_by_did('f1', '${target}', scope='${scope}')
assert archived['state'] == 'DONE' and archived['id'] == '${first}', archived
assert [r['name'] for r in c.list_requests_history('${source}', '${target}', 'D')] == ['f1']
assert c.set_transfer_limit('${target}', max_transfers=5, strategy='grouped_fifo')
limits = [l for l in c.list_transfer_limits() if l['rse_expression'] == '${target}']
assert len(limits) == 1 and limits[0]['max_transfers'] == 5 and limits[0]['direction'] == 'DESTINATION', limits
assert c.delete_transfer_limit('${target}')
assert [l for l in c.list_transfer_limits() if l['rse_expression'] == '${target}'] == []
print('ok')
`,
    );
    expect(result.status, `${result.stdout}\n${result.stderr}`).to.equal(0);
    expect(result.stdout.trim()).to.equal('ok');
  });
  it('adds, lists, updates and deactivates subscriptions and lists their rules (§7); asks for and lists lifetime exceptions (§8)', async () => {
    const scope = uniqueName('py.');
    const rse = `PY_SUB_${uniqueName('').toUpperCase()}`;
    const [made, added] = [uniqueName('made'), uniqueName('added')];
    const call = (method: string, path: string, body?: unknown) =>
      server.root(method, path, body === undefined ? {} : { body });
    expect((await call('POST', `/scopes/root/${scope}`)).status).to.equal(201);
    expect((await call('POST', `/rses/${rse}`, {})).status).to.equal(201);
    // A subscription with a rule made for it, to be read through the client.
    const options = {
      filter: { scope: [scope] },
      replication_rules: [{ copies: 1, rse_expression: rse }],
      comments: 'made over HTTP',
      lifetime: null,
      retroactive: false,
    };
    const madeId = (await call('POST', `/subscriptions/root/${made}`, { options })).text;
    expect((await call('POST', `/dids/${scope}/ds`, { type: 'DATASET' })).status).to.equal(201);
    const ruleResponse = await call('POST', '/rules/', {
      dids: [{ scope, name: 'ds' }],
      copies: 1,
      rse_expression: rse,
      subscription_id: madeId,
    });
    expect(ruleResponse.status, ruleResponse.text).to.equal(201);
    const [ruleId] = JSON.parse(ruleResponse.text) as string[];
    expect(
      (await call('POST', `/dids/${scope}/old`, { type: 'DATASET', meta: { eol_at: '2020-01-01' } })).status,
    ).to.equal(201);
    const result = await runClient(
      server,
      `
import json
from datetime import datetime, timedelta
from rucio.client import Client
from rucio.common.exception import SubscriptionDuplicate, LifetimeExceptionDuplicate, UnsupportedOperation
c = Client()
s = '${scope}'
sub_id = c.add_subscription('${added}', 'root', {'scope': [s], 'did_type': ['DATASET']}, [{'copies': 1, 'rse_expression': '${rse}', 'activity': 'User Subscriptions'}], 'from the client', 30, False, False)
assert len(sub_id) == 32, sub_id
try:
    c.add_subscription('${added}', 'root', {}, [{'copies': 1, 'rse_expression': '${rse}'}], 'again', False, False, False)
    raise SystemExit('a duplicate subscription accepted')
except SubscriptionDuplicate:
    pass
[sub] = list(c.list_subscriptions(name='${added}', account='root'))
assert sub['id'] == sub_id and sub['state'] == 'ACTIVE' and sub['policyid'] == 3, sub
assert json.loads(sub['filter']) == {'scope': [s], 'did_type': ['DATASET']}, sub
assert json.loads(sub['replication_rules'])[0]['rse_expression'] == '${rse}', sub
assert isinstance(sub['lifetime'], datetime) and isinstance(sub['created_at'], datetime), sub
assert sub_id in [x['id'] for x in c.list_subscriptions(account='root')]
assert [x['id'] for x in c.list_subscriptions(name='${added}')] == [sub_id]
assert c.list_subscriptions(name='nothing-at-all', account='root') == []
assert c.update_subscription('${added}', account='root', comments='changed', priority=1) is True
[sub] = list(c.list_subscriptions(name='${added}', account='root'))
assert sub['state'] == 'UPDATED' and sub['comments'] == 'changed' and sub['policyid'] == 1, sub
rules = list(c.list_subscription_rules('root', '${made}'))
assert [(r['id'], r['subscription_id'], r['name']) for r in rules] == [('${ruleId}', '${madeId}', 'ds')], rules
assert c.deactivate_subscription('${added}', account='root') is True
[sub] = list(c.list_subscriptions(name='${added}', account='root'))
assert sub['state'] == 'INACTIVE' and isinstance(sub['expired_at'], datetime), sub

try:
    c.add_exception([{'scope': s, 'name': 'old'}], 'root', 'old.*', 'still needed', datetime.utcnow() + timedelta(days=7))
    raise SystemExit('an exception accepted without a cutoff date')
except UnsupportedOperation:
    pass
c.set_config_option('lifetime_model', 'cutoff_date', '%d-12-31' % (datetime.utcnow().year + 1))
answer = c.add_exception([{'scope': s, 'name': 'old'}, {'scope': s, 'name': 'ds'}], 'root', 'old.*', 'still needed', datetime.utcnow() + timedelta(days=7))
assert list(answer['exceptions'].values()) == [[{'scope': s, 'name': 'old', 'did_type': 'DATASET'}]], answer
assert answer['unknown'] == [] and answer['not_affected'] == [{'scope': s, 'name': 'ds', 'did_type': 'DATASET'}], answer
[exception_id] = answer['exceptions'].keys()
rows = [e for e in c.list_exceptions() if e['id'] == exception_id]
assert len(rows) == 1 and rows[0]['state'] == 'WAITING' and rows[0]['account'] == 'root' and rows[0]['pattern'] == 'old.*', rows
assert isinstance(rows[0]['expires_at'], datetime) and rows[0]['expires_at'] > datetime.utcnow(), rows
try:
    c.add_exception([{'scope': s, 'name': 'old'}], 'root', None, 'again', datetime.utcnow() + timedelta(days=7))
    raise SystemExit('a duplicate exception accepted')
except LifetimeExceptionDuplicate:
    pass
print('ok')
`,
    );
    expect(result.status, `${result.stdout}\n${result.stderr}`).to.equal(0);
    expect(result.stdout.trim()).to.equal('ok');
  });

  it('puts files into an archive and lists them through it, as metalink too, signs URLs, and follows a redirect', async () => {
    const scope = uniqueName('py.');
    const disk = uniqueName('PY_ARCH_').toUpperCase();
    expect((await server.root('POST', `/scopes/root/${scope}`)).status).to.equal(201);
    const result = await runClient(
      server,
      `
import requests
from urllib.parse import quote
from rucio.client import Client
from rucio.client.credentialclient import CredentialClient
from rucio.common.exception import UnsupportedOperation
from rucio.common.utils import parse_replicas_from_string
c = Client()
s = '${scope}'
domains = {'wan': {'read': 1, 'write': 1, 'delete': 1}}
for rse, host in (('${disk}', 'xrd.example.org'), ('${signingRse}', 's3.example.org')):
    assert c.add_rse(rse)
    assert c.add_protocol(rse, {'scheme': 'https', 'hostname': host, 'port': 443, 'prefix': '/bucket', 'impl': 'rucio.rse.protocols.webdav.Default', 'domains': domains})
assert c.add_protocol('${disk}', {'scheme': 'root', 'hostname': 'xrd.example.org', 'port': 1094, 'prefix': '/data', 'impl': 'rucio.rse.protocols.xrootd.Default', 'domains': {'wan': {'read': 2, 'write': 2, 'delete': 2}}})
assert c.add_rse_attribute('${signingRse}', 'sign_url', 's3')
assert c.add_replicas('${disk}', [{'scope': s, 'name': 'logs.tar.gz', 'bytes': 100, 'adler32': '0cc737eb'}])
assert c.add_files_to_archive(s, 'logs.tar.gz', [{'scope': s, 'name': 'a.log', 'bytes': 7, 'adler32': '00000001'}])
assert list(c.list_archive_content(s, 'logs.tar.gz')) == [{'scope': s, 'name': 'a.log', 'bytes': 7, 'adler32': '00000001', 'md5': None}]
assert c.get_metadata(s, 'a.log')['constituent'] is True and c.get_metadata(s, 'logs.tar.gz')['is_archive'] is True
try:
    c.add_files_to_archive(s, 'a.log', [{'scope': s, 'name': 'b.log', 'bytes': 1}])
    raise SystemExit('a file that is no archive took files')
except UnsupportedOperation:
    pass
[line] = list(c.list_replicas([{'scope': s, 'name': 'a.log'}], schemes=['https']))
assert sorted((p.split('?')[0].split(':')[0], e['domain'], e['client_extract']) for p, e in line['pfns'].items()) == [('https', 'zip', True), ('root', 'zip', False)], line
assert all(p.endswith('?xrdcl.unzip=a.log') for p in line['pfns']), line
assert list(c.list_replicas([{'scope': s, 'name': 'a.log'}], resolve_archives=False))[0]['pfns'] == {}
[entry] = parse_replicas_from_string(c.list_replicas([{'scope': s, 'name': 'a.log'}], metalink=True))
assert entry['did'] == s + ':a.log' and entry['bytes'] == 7, entry
assert [(src['rse'], src['domain'], src['priority'], src['client_extract']) for src in entry['sources']][0] == ('${disk}', 'zip', '1', False), entry
url = CredentialClient().get_signed_url('${signingRse}', 's3', 'read', 'https://s3.example.org/bucket/data/f.txt', lifetime=600)
assert url.startswith('https://s3.example.org/bucket/data/f.txt?') and 'X-Amz-Credential=AKIDPY' in url and 'X-Amz-Expires=600' in url and 'X-Amz-Signature=' in url, url
assert c.add_replicas('${signingRse}', [{'scope': s, 'name': 'f.txt', 'bytes': 1, 'adler32': '0cc737eb'}])
[signed] = list(c.list_replicas([{'scope': s, 'name': 'f.txt'}], signature_lifetime=300))
assert all('X-Amz-Expires=300' in p for p in signed['pfns']) and len(signed['pfns']) == 1, signed
# A download redirect needs no token: any HTTP client follows it.
answer = requests.get(c.host + '/redirect/%s/logs.tar.gz' % s, allow_redirects=False)
assert answer.status_code == 303 and answer.headers['Location'].startswith('https://xrd.example.org:443/bucket/'), (answer.status_code, answer.headers)
print('ok')
`,
    );
    expect(result.status, `${result.stdout}\n${result.stderr}`).to.equal(0);
    expect(result.stdout.trim()).to.equal('ok');
  });

  it('registers, updates, publishes, lists and removes open data entries', async () => {
    const scope = uniqueName('py.');
    const doi = `10.1234/${uniqueName('py')}`;
    expect((await server.root('POST', `/scopes/root/${scope}`)).status).to.equal(201);
    const result = await runClient(
      server,
      `
from rucio.client import Client
from rucio.common.exception import (DataIdentifierNotFound, OpenDataDataIdentifierAlreadyExists,
    OpenDataDataIdentifierNotFound, OpenDataDuplicateDOI, OpenDataInvalidStateUpdate)
c = Client()
s = '${scope}'
assert c.add_dataset(s, 'od1') and c.add_dataset(s, 'od2')
assert c.add_opendata_did(scope=s, name='od1') is True
for error, call in ((OpenDataDataIdentifierAlreadyExists, lambda: c.add_opendata_did(scope=s, name='od1')),
                    (DataIdentifierNotFound, lambda: c.add_opendata_did(scope=s, name='nothing')),
                    (OpenDataInvalidStateUpdate, lambda: c.update_opendata_did(scope=s, name='od1', state='public'))):
    try:
        call()
        raise SystemExit('accepted: %s' % error.__name__)
    except error:
        pass
entry = c.get_opendata_did(scope=s, name='od1')
assert entry['state'] == 'DRAFT' and entry['doi'] is None and entry['record_id'] is None, entry
assert c.close(s, 'od1')
done = c.update_opendata_did(scope=s, name='od1', state='public', meta={'title': 'Run 2'}, doi='${doi}', record_id=42)
assert done['state_old'] == 'DRAFT' and done['state_new'] == 'PUBLIC' and done['doi_new'] == '${doi}' and done['record_id_new'] == 42, done
public = c.list_opendata_dids(public=True)
assert (s, 'od1', 'PUBLIC') in [(d['scope'], d['name'], d['state']) for d in public['dids']], public
entry = c.get_opendata_did(scope=s, name='od1', public=True, include_metadata=True)
assert entry['meta'] == {'title': 'Run 2'} and entry['doi'] == '${doi}' and entry['record_id'] == 42, entry
assert c.add_opendata_did(scope=s, name='od2')
assert 'od2' in [d['name'] for d in c.list_opendata_dids(state='draft')['dids']]
assert 'od2' not in [d['name'] for d in c.list_opendata_dids(public=True)['dids']]
try:
    c.update_opendata_did(scope=s, name='od2', doi='${doi}')
    raise SystemExit('a DOI given twice')
except OpenDataDuplicateDOI:
    pass
assert c.remove_opendata_did(scope=s, name='od2') is True
try:
    c.get_opendata_did(scope=s, name='od2')
    raise SystemExit('removed entry found')
except OpenDataDataIdentifierNotFound:
    pass
print('ok')
`,
    );
    expect(result.status, `${result.stdout}\n${result.stderr}`).to.equal(0);
    expect(result.stdout.trim()).to.equal('ok');
  });

  it('registers files by their DIRAC paths with add_files: datasets, containers, replicas and rules', async () => {
    const [vo, scope] = [uniqueName('vo'), uniqueName('sc')];
    const rse = `PY_${uniqueName('').toUpperCase()}_DIRAC`;
    const result = await runClient(
      server,
      `
from rucio.client import Client
from rucio.common.exception import DataIdentifierNotFound
from rucio.common.utils import generate_uuid
c = Client()
vo, s, rse = '${vo}', '${scope}', '${rse}'
c.set_config_option('common', 'extract_scope', 'dirac')
assert c.add_rse(rse)
assert c.add_protocol(rse, {'scheme': 'root', 'hostname': '${vo}.example.org', 'port': 1094, 'prefix': '/data', 'impl': 'rucio.rse.protocols.xrootd.Default', 'domains': {'wan': {'read': 1, 'write': 1, 'delete': 1}}})
assert c.add_rse_attribute(rse, 'ANY', True)
c.add_scope('root', vo)
c.add_scope('root', s)
assert c.add_container(vo, '/' + vo)
base = '/%s/%s' % (vo, s)
files = [{'lfn': base + '/run1/raw/f%d' % i, 'rse': rse, 'bytes': 10, 'adler32': '0cc737eb', 'guid': generate_uuid()} for i in (1, 2)]
assert c.add_files(files, parents_metadata={base + '/run1/raw': {'project': 'p1'}}) is True
assert sorted(d['name'] for d in c.list_content(s, base + '/run1/raw')) == [f['lfn'] for f in files]
assert [(d['name'], d['type']) for d in c.list_content(vo, '/' + vo)] == [(base, 'CONTAINER')]
assert [(d['name'], d['type']) for d in c.list_content(s, base + '/run1')] == [(base + '/run1/raw', 'DATASET')]
rules = list(c.list_did_rules(s, base + '/run1/raw'))
assert [(r['rse_expression'], r['grouping'], r['state']) for r in rules] == [('ANY=true', 'NONE', 'OK')], rules
assert [r['rse_expression'] for r in c.list_did_rules(s, files[0]['lfn'])] == [rse]
assert c.get_metadata(s, base + '/run1/raw')['project'] == 'p1'
replicas = list(c.list_replicas([{'scope': s, 'name': files[0]['lfn']}]))
assert list(replicas[0]['rses']) == [rse], replicas
try:
    c.add_files([{'lfn': '/novo-${vo}/%s/ds/f' % s, 'rse': rse, 'bytes': 1, 'adler32': '0cc737eb'}])
    raise SystemExit('files added without a top container')
except DataIdentifierNotFound as error:
    assert 'top container' in str(error), error
print('ok')
`,
    );
    expect(result.status, `${result.stdout}\n${result.stderr}`).to.equal(0);
    expect(result.stdout.trim()).to.equal('ok');
  });

  it('logs in with an SSH key (paramiko signs the challenge, ssh-rsa) and acts as the account', async () => {
    const account = uniqueName('pyssh');
    const key = sshKeyPair('rsa');
    expect(
      (await server.root('POST', `/accounts/${account}`, { body: { type: 'USER', email: 'a@b.c' } })).status,
    ).to.equal(201);
    const identity = { identity: key.publicLine, authtype: 'SSH', email: 'a@b.c' };
    expect((await server.root('POST', `/accounts/${account}/identities`, { body: identity })).status).to.equal(201);
    const config =
      `[client]\nrucio_host = ${server.url}\nauth_host = ${server.url}\nauth_type = ssh\n` +
      `account = ${account}\nrequest_retries = 2\n`;
    const home = makeRucioHome(config, pythonPath);
    try {
      const keyFile = join(home.path, 'id_rsa');
      writeFileSync(keyFile, key.privatePem, { mode: 0o600 });
      const result = await run(
        CLIENT_PYTHON,
        [
          '-c',
          `
from rucio.client import Client
c = Client(creds={'ssh_private_key': '${keyFile}'})
assert c.auth_token.startswith('${account}-ssh:pubkey-'), c.auth_token
assert c.whoami()['account'] == '${account}'
print('ok')
`,
        ],
        { env: { ...process.env, RUCIO_HOME: home.path, PYTHONPATH: pythonPath, TMPDIR: home.path }, cwd: home.path },
      );
      expect(result.status, `${result.stdout}\n${result.stderr}`).to.equal(0);
      expect(result.stdout.trim()).to.equal('ok');
    } finally {
      home.dispose();
    }
  });

  it('uploads, downloads and adds a rule with the rucio command line, on posix RSEs (directories)', async () => {
    const scope = uniqueName('cli.');
    const [first, second] = [uniqueName('CLI_A_').toUpperCase(), uniqueName('CLI_B_').toUpperCase()];
    const work = makeTempDir('rucio-cli-');
    const home = makeRucioHome(rucioConfig(server.url, ROOT_USERNAME, ROOT_PASSWORD), pythonPath);
    try {
      expect((await server.root('POST', `/accounts/root/scopes/${scope}`)).status).to.equal(201);
      for (const rse of [first, second]) {
        mkdirSync(join(work.path, rse));
        expect((await server.root('POST', `/rses/${rse}`, { body: {} })).status).to.equal(201);
        const protocol = {
          hostname: 'localhost',
          port: 0,
          prefix: join(work.path, rse),
          impl: 'rucio.rse.protocols.posix.Default',
          domains: { lan: { read: 1, write: 1, delete: 1 }, wan: { read: 1, write: 1, delete: 1 } },
        };
        const added = await server.root('POST', `/rses/${rse}/protocols/file`, { body: protocol });
        expect(added.status, added.text).to.equal(201);
      }
      writeFileSync(join(work.path, 'notes.txt'), 'uploaded by the rucio command line\n');
      const rucio = (...args: string[]) =>
        run(join(home.path, 'bin', 'rucio'), args, {
          env: { ...process.env, RUCIO_HOME: home.path, TMPDIR: home.path },
          cwd: work.path,
        });
      const explain = (result: Run) => `${result.stdout}\n${result.stderr}`;
      const upload = await rucio('upload', '--rse', first, '--scope', scope, 'notes.txt');
      expect(upload.status, explain(upload)).to.equal(0);
      const download = await rucio('download', '--dir', 'downloaded', `${scope}:notes.txt`);
      expect(download.status, explain(download)).to.equal(0);
      expect(readFileSync(join(work.path, 'downloaded', scope, 'notes.txt'), 'utf8')).to.equal(
        'uploaded by the rucio command line\n',
      );
      // The download sent a trace (without a token): kronos records the read on the file.
      const { commands, readModels, progress } = server.runtime.services;
      const context = createWorkerContext(
        commands,
        readModels,
        progress,
        silentLogger(),
        createTransferTools({ dataDir: work.path, clock: server.runtime.services.clock }),
        { clock: server.runtime.services.clock },
      );
      await kronosRole.run({ jobId: `interop-${scope}`, startedAt: new Date(Date.now() + 5000) }, context);
      await progress.waitFor(await commands.eventStore.headPosition(), 5000);
      const meta = (await server.root('GET', `/dids/${scope}/notes.txt/meta`)).json<Record<string, unknown>>();
      expect(meta.access_cnt, JSON.stringify(meta)).to.equal(1);
      expect(meta.accessed_at).to.be.a('string');
      const added = await rucio('rule', 'add', `${scope}:notes.txt`, '--copies', '1', '--rses', second);
      expect(added.status, explain(added)).to.equal(0);
      const ruleId = added.stdout.trim();
      expect(ruleId).to.match(/^[0-9a-f]{32}$/);
      const shown = await rucio('rule', 'show', ruleId);
      expect(shown.status, explain(shown)).to.equal(0);
      // No workers run here: the copy is not made, the rule waits for it.
      expect(shown.stdout).to.match(/State:\s+REPLICATING/);
      expect(shown.stdout).to.match(new RegExp(`RSE Expression:\\s+${second}`));
      // The rules protecting the file, with the bytes of what each is on (list_associated_rules_for_file):
      // Rucio 39's command line names it `rule list --file` (its legacy `list-rules` command is gone).
      const listed = await rucio('rule', 'list', '--file', `${scope}:notes.txt`);
      expect(listed.status, explain(listed)).to.equal(0);
      expect(listed.stdout).to.include(ruleId);
    } finally {
      home.dispose();
      work.dispose();
    }
  });
};

describe('Interop: the Rucio Python client', () => {
  const stockPath = CLIENT_PYTHONPATH;
  if (!stockPath) {
    it('runs when RUCIO_CLIENT_PYTHONPATH names an importable Rucio client', function () {
      skipBecause(this, SKIP_REASON);
    });
    return;
  }
  for (const variant of VARIANTS) describe(variant.title, () => clientSuite(variant, stockPath));
});
