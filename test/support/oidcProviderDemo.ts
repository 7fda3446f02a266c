import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startTestOidcProvider } from './oidcProvider.ts';

/**
 * The tests' OpenID provider, by hand: to try OIDC logins and JWTs against a local `dms serve`
 * (README, "Logging in with OpenID Connect"). Starts oidc-provider on a loopback port, registers
 * the service at --service as its client `dms`, writes the providers file for DMS_OIDC_PROVIDERS,
 * prints an access token for each user named, and runs until interrupted.
 *
 *   node --import tsx test/support/oidcProviderDemo.ts --service http://127.0.0.1:8080 --file /tmp/idpsecrets.json alice
 */
const { values, positionals } = parseArgs({
  options: {
    service: { type: 'string', default: 'http://127.0.0.1:8080' },
    file: { type: 'string', default: 'idpsecrets.json' },
  },
  allowPositionals: true,
});

const service = values.service.replace(/\/$/, '');
const file = resolve(values.file);
const provider = await startTestOidcProvider();
const redirectUris = [`${service}/auth/oidc_code`, `${service}/auth/oidc_token`];
await provider.addClient({
  client_id: 'dms',
  client_secret: 'dms-demo-secret',
  redirect_uris: redirectUris,
  // client_credentials: the tokens of transfers between oidc_support RSEs (`dms transfers path --tokens`).
  grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
  response_types: ['code'],
});
writeFileSync(
  file,
  `${JSON.stringify({ demo: { issuer: provider.issuer, client_id: 'dms', client_secret: 'dms-demo-secret', redirect_uris: redirectUris } }, null, 2)}\n`,
);
console.log(`OpenID provider: ${provider.issuer} (any user name logs in, with any password)`);
console.log(`providers file:  ${file}   (start dms with DMS_OIDC_PROVIDERS=${file})`);
for (const user of positionals) {
  console.log(`\nidentity of ${user}: SUB=${user}, ISS=${provider.issuer}`);
  console.log(`access token of ${user} (an hour):\n${await provider.accessToken(user)}`);
}
console.log('\nCtrl-C stops the provider.');
const stop = () => void provider.stop().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
