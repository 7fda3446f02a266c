import { isRoot } from '../../../domain/permission/policy.ts';
import type { ListingRse } from '../../../domain/replica/replicaListing.ts';
import { ErrorLoadingCredentials, UnsupportedOperation, ValueError } from '../../../domain/shared/errors.ts';
import {
  MAX_SIGNATURE_LIFETIME,
  SIGN_URL_SERVICES,
  UrlNotSigned,
  type SignUrlOperation,
  type SignUrlService,
} from '../../../infra/storage/urlSigner.ts';
import { configOption } from '../../../projections/config/configQueries.ts';
import type { ListedRse } from '../../../projections/replica/listingRses.ts';
import type { PfnSigner } from '../../../projections/replica/replicaQueries.ts';
import type { AppContext, Services } from '../../services.ts';
import { dateOf } from '../../../infra/clock.ts';

/**
 * Signing storage URLs for a request: `/credentials/signurl` and the https PFNs of RSEs with a
 * `sign_url` attribute in replica listings. Both are root's alone (Rucio's `perm_get_signed_url`).
 */

/** Whether the caller may have URLs signed: only root, as in Rucio. */
export const maySign = (ctx: AppContext): boolean =>
  ctx.state.issuer !== undefined && isRoot({ account: ctx.state.issuer, attributes: {} });

export const isSignUrlService = (value: unknown): value is SignUrlService =>
  typeof value === 'string' && (SIGN_URL_SERVICES as readonly string[]).includes(value);

/** A lifetime in seconds: a whole number from 1 to seven days, the longest S3 and GCS accept. */
export const checkLifetime = (lifetime: number, name: string): number => {
  if (!Number.isSafeInteger(lifetime) || lifetime < 1 || lifetime > MAX_SIGNATURE_LIFETIME)
    throw new ValueError(
      `'${name}' must be a whole number of seconds from 1 to ${MAX_SIGNATURE_LIFETIME}, not ${lifetime}`,
    );
  return lifetime;
};

/** Config `credentials.signature_lifetime`, else 600 s: the lifetime of signatures in listings that name none. */
export const defaultSignatureLifetime = async (services: Services): Promise<number> => {
  const text = await configOption(services.readModels, 'credentials', 'signature_lifetime');
  const lifetime = text !== undefined && /^\s*\d+\s*$/.test(text) ? Number(text) : 600;
  return lifetime >= 1 && lifetime <= MAX_SIGNATURE_LIFETIME ? lifetime : 600;
};

/** A refusal to sign as the Rucio error the client gets. */
export const signingError = (error: unknown): unknown => {
  if (!(error instanceof UrlNotSigned)) return error;
  return error.reason === 'keys' ? new ErrorLoadingCredentials(error.message) : new UnsupportedOperation(error.message);
};

/**
 * The signer of a listing: each https PFN of an RSE whose `sign_url` attribute names a service
 * is signed for reading, for `lifetime` seconds. A PFN that cannot be signed (no keys, an
 * attribute naming no service) is left out, as Rucio leaves it out; the log says why, once per
 * RSE and request.
 */
export const listingSigner = (
  ctx: AppContext,
  services: Services,
  rses: ReadonlyMap<string, ListedRse>,
  lifetime: number,
): PfnSigner => {
  const reported = new Set<string>();
  const now = dateOf(services.clock);
  return async (rse: ListingRse, pfn: string) => {
    const service = rse.signUrl;
    try {
      if (!isSignUrlService(service))
        throw new UrlNotSigned('unsupported', `sign_url ${JSON.stringify(service)} names no signing service`);
      return await services.urlSigner.sign({
        rse: { id: rse.id, name: rse.rse },
        service,
        operation: 'read' satisfies SignUrlOperation,
        url: pfn,
        lifetime,
        s3UrlStyle: s3UrlStyleOf(rses.get(rse.id)),
        now,
      });
    } catch (error) {
      if (!(error instanceof UrlNotSigned)) throw error;
      if (!reported.has(rse.id)) {
        reported.add(rse.id);
        ctx.state.logger.warn(
          { rse: rse.rse, reason: error.message },
          'PFNs of an RSE with sign_url left out: not signed',
        );
      }
      return null;
    }
  };
};

/** The RSE's `s3_url_style` attribute, when it is text. */
const s3UrlStyleOf = (rse: ListedRse | undefined): string | undefined => {
  const style = rse?.facts.attributes.s3_url_style;
  return typeof style === 'string' ? style : undefined;
};
