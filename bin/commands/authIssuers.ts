import {
  issuerStatusCollection,
  TrustedIssuers,
  type IssuerStatusDocument,
} from '../../api/auth/oidc/trustedIssuers.ts';
import { systemClock } from '../../infra/clock.ts';
import type { ServiceConfig } from '../../infra/config.ts';
import { openStores } from '../../infra/stores.ts';
import { printTable } from './table.ts';

/**
 * `dms auth issuers`: the trusted OpenID providers of DMS_OIDC_PROVIDERS and what the API
 * processes last learned of each (when its discovery document and keys were fetched, the key ids,
 * the last error). With `--check`, fetches both from this machine now and records the outcome the
 * same way. Exit 1 when a checked provider could not be reached.
 */
export const authIssuersCommand = async (
  config: ServiceConfig,
  options: Readonly<{ json?: boolean; check?: boolean }> = {},
): Promise<number> => {
  if (config.oidcProviders.length === 0) {
    if (options.json) console.log('[]');
    else
      console.log('No OpenID provider is trusted: set DMS_OIDC_PROVIDERS to a providers file (see docs/security.md).');
    return 0;
  }
  const { eventStore, readStore } = await openStores(config);
  try {
    let failed = false;
    if (options.check) {
      const issuers = new TrustedIssuers(config.oidcProviders, readStore, systemClock);
      for (const issuer of issuers.all) failed = (await issuer.fetchNow()).error !== undefined || failed;
    }
    const statuses = readStore.collection<IssuerStatusDocument>(issuerStatusCollection);
    const rows = await Promise.all(
      config.oidcProviders.map(async (provider) => {
        const status = await statuses.get(provider.nickname);
        const current = status?.issuer === provider.issuer ? status : null;
        return {
          nickname: provider.nickname,
          issuer: provider.issuer,
          client_id: provider.clientId,
          redirect_uris: provider.redirectUris,
          discovered_at: current?.discoveredAt ?? null,
          keys_fetched_at: current?.keysFetchedAt ?? null,
          key_ids: current?.keyIds ?? [],
          last_error: current?.lastError ?? null,
          last_error_at: current?.lastErrorAt ?? null,
        };
      }),
    );
    if (options.json) {
      console.log(JSON.stringify(rows, null, 2));
      return failed ? 1 : 0;
    }
    const table = [['nickname', 'issuer', 'client id', 'keys fetched', 'key ids', 'last error']];
    for (const row of rows)
      table.push([
        row.nickname,
        row.issuer,
        row.client_id,
        row.keys_fetched_at ?? 'not yet (fetched at the first token or login)',
        row.key_ids.join(', ') || '-',
        row.last_error ? `${row.last_error_at}: ${row.last_error}` : '-',
      ]);
    printTable(table);
    return failed ? 1 : 0;
  } finally {
    await eventStore.close();
    await readStore.close();
  }
};
