import { readFileSync } from 'node:fs';
import { z } from 'zod';

/** One trusted OpenID provider, as Rucio's `idpsecrets.json` describes it under its nickname. */
export type OidcProviderConfig = Readonly<{
  nickname: string;
  /** The issuer URL exactly as the provider's tokens carry it in `iss`. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** This service's URLs registered with the provider: …/auth/oidc_code and …/auth/oidc_token. */
  redirectUris: readonly string[];
}>;

/**
 * An issuer must be `https://`; plain `http://` only on a loopback address (a provider started by
 * the tests, or one beside the service on the same machine), where nobody can read or alter the
 * traffic. Discovery and keys are fetched from it, so anything else would let the network forge
 * the keys that sign tokens.
 */
export const isAcceptableIssuerUrl = (value: string): boolean => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.username || url.password || url.search || url.hash) return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && (url.hostname === '127.0.0.1' || url.hostname === '[::1]') && url.port !== '';
};

const providerSchema = z
  .object({
    issuer: z.string().refine(isAcceptableIssuerUrl, {
      message: 'expected an https:// URL (http:// only as http://127.0.0.1:<port>)',
    }),
    client_id: z.string().min(1),
    client_secret: z.string().min(1),
    redirect_uris: z.array(z.string().refine((value) => URL.canParse(value), { message: 'expected a URL' })).min(1),
  })
  // Rucio's file has more fields (a SCIM client, ...); they are not used here and not refused.
  .loose();

const fileSchema = z.record(z.string().min(1), providerSchema);

/**
 * Reads the providers file named by DMS_OIDC_PROVIDERS. Returns the problems instead of throwing,
 * so that the configuration loader names the variable in its message.
 */
export const readOidcProviders = (path: string): { providers: OidcProviderConfig[] } | { problem: string } => {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return { problem: `cannot read the file: ${error instanceof Error ? error.message : String(error)}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { problem: `not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { problem: `${issue.path.map(String).join('.') || 'the file'}: ${issue.message}` };
  }
  const providers = Object.entries(parsed.data).map(([nickname, entry]) => ({
    nickname,
    issuer: entry.issuer,
    clientId: entry.client_id,
    clientSecret: entry.client_secret,
    redirectUris: entry.redirect_uris,
  }));
  if (providers.length === 0) return { problem: 'names no provider' };
  const issuers = new Set(providers.map((provider) => provider.issuer.replace(/\/$/, '')));
  if (issuers.size !== providers.length) return { problem: 'names one issuer under two nicknames' };
  return { providers };
};
