import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { ConfigurationInvalidError, loadServiceConfig } from '../../infra/serviceConfig.ts';
import { makeTempDir } from '../support/tempDir.ts';

/** DMS_OIDC_PROVIDERS: the trusted OpenID providers, in the shape of Rucio's idpsecrets.json. */
describe('Configuration: DMS_OIDC_PROVIDERS', () => {
  const temp = makeTempDir();
  after(() => temp.dispose());

  const withFile = (content: string) => {
    const file = join(temp.path, `providers-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, content);
    return file;
  };
  const provider = (issuer: string) => ({
    issuer,
    client_id: 'dms',
    client_secret: 's3cret',
    redirect_uris: ['https://dms.example.org/auth/oidc_code', 'https://dms.example.org/auth/oidc_token'],
  });
  const problemOf = (file: string): string => {
    try {
      loadServiceConfig({ DMS_OIDC_PROVIDERS: file });
    } catch (error) {
      expect(error).to.be.instanceOf(ConfigurationInvalidError);
      return (error as ConfigurationInvalidError).problems.join('\n');
    }
    throw new Error('the configuration was accepted');
  };

  it('reads each provider under its nickname; none when the variable is unset', () => {
    const file = withFile(JSON.stringify({ iam: { ...provider('https://iam.example.org/'), SCIM: {} } }));
    expect(loadServiceConfig({ DMS_OIDC_PROVIDERS: file }).oidcProviders).to.deep.equal([
      {
        nickname: 'iam',
        issuer: 'https://iam.example.org/',
        clientId: 'dms',
        clientSecret: 's3cret',
        redirectUris: provider('x').redirect_uris,
      },
    ]);
    expect(loadServiceConfig({}).oidcProviders).to.deep.equal([]);
  });

  it('accepts plain http only for a loopback issuer with a port', () => {
    expect(
      loadServiceConfig({ DMS_OIDC_PROVIDERS: withFile(JSON.stringify({ t: provider('http://127.0.0.1:9000') })) }),
    )
      .to.have.property('oidcProviders')
      .with.length(1);
    expect(problemOf(withFile(JSON.stringify({ t: provider('http://iam.example.org') })))).to.match(
      /^DMS_OIDC_PROVIDERS=".*": t\.issuer: expected an https:\/\/ URL/,
    );
  });

  it('refuses a missing file, a file that is not JSON, and a provider without a client id, naming the variable', () => {
    expect(problemOf(join(temp.path, 'missing.json'))).to.match(/^DMS_OIDC_PROVIDERS=".*": cannot read the file/);
    expect(problemOf(withFile('{ not json'))).to.match(/^DMS_OIDC_PROVIDERS=".*": not JSON/);
    const { client_id: _omitted, ...withoutClient } = provider('https://iam.example.org');
    expect(problemOf(withFile(JSON.stringify({ iam: withoutClient })))).to.match(/iam\.client_id/);
  });
});
