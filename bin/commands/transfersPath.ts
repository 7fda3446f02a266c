import { decodeJwt } from 'jose';
import { settingValue, SETTINGS } from '../../domain/config/settings.ts';
import { pathReport } from '../../domain/request/pathReport.ts';
import type { ServiceConfig } from '../../infra/config.ts';
import { ServiceTokens } from '../../infra/security/clientCredentialsTokens.ts';
import { openStores } from '../../infra/stores.ts';
import { configSections } from '../../projections/config/configQueries.ts';
import { allProjections } from '../../projections/index.ts';
import { loadTopology } from '../../projections/request/conveyorQueries.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import { printTable } from './table.ts';

/**
 * Prints the path the conveyor would take from one RSE to another (domain/request/pathReport.ts):
 * each copy with its distance, protocols and tool, whether its source is staged from tape, and the
 * token grants of copies between `oidc_support` RSEs. With `--tokens`, asks the trusted provider
 * (`oidc.admin_issuer`) for those tokens as the conveyor would, and prints what each grants.
 */
export const transfersPathCommand = async (
  config: ServiceConfig,
  source: string,
  dest: string,
  options: Readonly<{ json?: boolean; wide?: boolean; tokens?: boolean }> = {},
): Promise<number> => {
  const { eventStore, readStore } = await openStores(config);
  try {
    const readModels = new ReadModels(readStore, allProjections);
    await readModels.refresh();
    const sections = await configSections(readModels);
    const topology = await loadTopology(readModels, sections);
    const idOf = (name: string) => topology.facts.rses.find((rse) => rse.rse === name)?.id ?? '';
    const report = pathReport(topology, idOf(source), idOf(dest));
    if (options.json && !options.tokens) {
      console.log(JSON.stringify(report, null, 2));
      return report.kind === 'path' ? 0 : 1;
    }
    if (report.kind === 'none') {
      console.log(`no path: ${report.reason}`);
      return 1;
    }
    console.log(
      `${[report.copies[0]!.source, ...report.copies.map((copy) => copy.dest)].join(' -> ')} (cost ${report.cost})`,
    );
    printTable(
      [
        ['copy', 'distance', 'protocols', 'tool', 'staged', 'tokens'],
        ...report.copies.map((copy) => [
          `${copy.source} -> ${copy.dest}`,
          String(copy.distance),
          `${copy.sourceScheme} -> ${copy.destScheme}`,
          copy.transfertool,
          copy.staged ? 'yes' : 'no',
          copy.tokens ? 'yes' : 'no',
        ]),
      ],
      options,
    );
    if (!options.tokens) return 0;
    const tokens = new ServiceTokens(config.oidcProviders).forIssuer(
      settingValue(sections, SETTINGS.oidcAdminIssuer) || null,
    );
    let missing = 0;
    for (const copy of report.copies) {
      if (!copy.tokens) continue;
      for (const [end, grant] of [
        ...copy.tokens.sources.map((sourceGrant) => [`${copy.source} (read)`, sourceGrant] as const),
        [`${copy.dest} (write)`, copy.tokens.destination] as const,
      ]) {
        const token = tokens ? await tokens.token(grant.audience, grant.scope, 0) : null;
        if (!token) missing += 1;
        const claims = token ? decodeJwt(token) : null;
        console.log(
          `token for ${end}: audience ${grant.audience}, scope ${grant.scope}: ${
            claims
              ? `granted by ${String(claims.iss)}, expires ${new Date(Number(claims.exp) * 1000).toISOString()}`
              : `none (${tokens?.lastError ?? 'no trusted provider: DMS_OIDC_PROVIDERS, oidc.admin_issuer'})`
          }`,
        );
      }
    }
    return missing === 0 ? 0 : 1;
  } finally {
    await eventStore.close();
    await readStore.close();
  }
};
