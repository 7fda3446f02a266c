import { attributeFlag, type Topology, type TransferRse } from './topology.ts';

/**
 * Which copies use OAuth2 tokens instead of certificates, and for what (Rucio's `_use_tokens`,
 * `determine_audience_for_rse`, `determine_scope_for_rse`): a copy uses tokens when every RSE it
 * touches has `oidc_support` and it reads and writes over WebDAV (`davs`). A storage's token names
 * the storage by the host names of its `davs` protocols (the audience) and grants operations on
 * their prefixes, less the RSE's `oidc_base_path` (the scope): `storage.read` on a source,
 * `storage.modify` and `storage.read` on a destination, each with `offline_access` so that FTS can
 * refresh it during a long copy. FTS itself takes a token for its host with the scope `fts`.
 */

export type TokenGrant = Readonly<{ audience: string; scope: string }>;

/** The grants of one copy's tokens: one per source, in order, and one for the destination. */
export type CopyTokenGrants = Readonly<{ sources: readonly TokenGrant[]; destination: TokenGrant }>;

const davsProtocols = (rse: TransferRse) => rse.protocols.filter((protocol) => protocol.scheme === 'davs');

/** Rucio's `determine_audience_for_rse`: the host names of the RSE's `davs` protocols, sorted, space-separated. */
export const tokenAudienceOf = (rse: TransferRse): string =>
  [...new Set(davsProtocols(rse).map((protocol) => protocol.hostname))].sort().join(' ');

/** Rucio's `determine_scope_for_rse`: each scope on each `davs` prefix (less `oidc_base_path`), then the extra scopes. */
export const tokenScopeOf = (
  rse: TransferRse,
  scopes: readonly string[],
  extraScopes: readonly string[] = [],
): string => {
  const base = rse.attributes.oidc_base_path;
  const prefixes = new Set(
    davsProtocols(rse).map((protocol) => {
      const prefix = protocol.prefix ?? '';
      return typeof base === 'string' && base !== '' && prefix.startsWith(base) ? prefix.slice(base.length) : prefix;
    }),
  );
  return [...scopes.flatMap((scope) => [...prefixes].map((prefix) => `${scope}:${prefix}`)), ...extraScopes]
    .sort()
    .join(' ');
};

/** Whether a URL is read or written over WebDAV, the only protocol tokens are used with. */
const isDavs = (url: string): boolean => url.startsWith('davs://');

/**
 * The token grants of a copy when it uses tokens (Rucio's `_use_tokens`: every endpoint on an RSE
 * with `oidc_support`, over `davs`), else null.
 */
export const copyTokenGrants = (
  topology: Topology,
  sources: readonly Readonly<{ rseId: string; pfn: string }>[],
  destination: Readonly<{ rseId: string; pfn: string }>,
): CopyTokenGrants | null => {
  const endpoints = [...sources, destination].map((endpoint) => ({ endpoint, rse: topology.rse(endpoint.rseId) }));
  if (
    sources.length === 0 ||
    !endpoints.every(
      ({ endpoint, rse }) => rse !== undefined && attributeFlag(rse, 'oidc_support') && isDavs(endpoint.pfn),
    )
  )
    return null;
  const rseOf = (rseId: string) => topology.rse(rseId)!;
  return {
    sources: sources.map(({ rseId }) => ({
      audience: tokenAudienceOf(rseOf(rseId)),
      scope: tokenScopeOf(rseOf(rseId), ['storage.read'], ['offline_access']),
    })),
    destination: {
      audience: tokenAudienceOf(rseOf(destination.rseId)),
      // StoRM needs storage.read to stat what it writes (Rucio's note).
      scope: tokenScopeOf(rseOf(destination.rseId), ['storage.modify', 'storage.read'], ['offline_access']),
    },
  };
};

/** The grant of a token for an FTS server itself: its host name, the scope `fts` (Rucio's FTS3Transfertool). */
export const ftsTokenGrant = (ftsUrl: string): TokenGrant | null => {
  try {
    return { audience: new URL(ftsUrl).hostname, scope: 'fts' };
  } catch {
    return null;
  }
};
