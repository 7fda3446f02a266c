import {
  AccessDenied,
  ErrorLoadingCredentials,
  RSENotFound,
  UnsupportedOperation,
  ValueError,
} from '../../../domain/shared/errors.ts';
import { SIGN_URL_OPERATIONS, type SignUrlOperation } from '../../../infra/storage/urlSigner.ts';
import { sendText } from '../../http.ts';
import { queryOf, queryText } from '../../params.ts';
import type { HandlerFor, RouteOptions, RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';
import { activeRse } from '../rse/rseViews.ts';
import { integerParameter } from '../replica/replicaParams.ts';
import { checkLifetime, isSignUrlService, maySign, signingError } from './signing.ts';
import { dateOf } from '../../../infra/clock.ts';
import { convertedBy } from '../../routeInput.ts';
import { isOneOf } from '../../../domain/shared/narrowing.ts';

const isOperation = (value: string): value is SignUrlOperation => isOneOf(SIGN_URL_OPERATIONS, value);

/** A query value Rucio requires: ValueError 'Parameter "<name>" not found' without it. */
const requiredText = (name: string) =>
  convertedBy(queryText(), (text) => {
    if (text === undefined) throw new ValueError(`Parameter "${name}" not found`);
    return text;
  });

/** A query value out of a few (`isChoice`), `fallback` when empty or absent, else `refused()`. */
const choiceOr = <T extends string>(fallback: T, isChoice: (value: string) => value is T, refused: () => Error) =>
  convertedBy(queryText(), (text): T => {
    const value = text || fallback;
    if (!isChoice(value)) throw refused();
    return value;
  });

/**
 * GET /credentials/signurl (and Rucio's legacy `/credentials/signur`): a URL of an RSE's storage
 * signed for one operation (`op`: read, write, delete) for `lifetime` seconds, by the service
 * `svc` (gcs, s3, swift), with the keys of the RSE accounts file (DMS_RSE_ACCOUNTS). Root only,
 * as in Rucio, and only for RSEs whose `sign_url` attribute says their URLs are signed. The
 * answer is the signed URL as text.
 */
export const registerCredentialRoutes = (routes: RouteTable, services: Services): void => {
  // The query's values are checked in Rucio's order (rse, url, lifetime, svc, op); then the X-Svc-Account header.
  const options = {
    accept: ['application/octet-stream'],
    summary: 'A storage URL signed for one operation and a lifetime (root only; RSEs with sign_url).',
    query: queryOf({
      rse: requiredText('rse').describe('The RSE the URL points to (required).'),
      url: requiredText('url').describe('The URL to sign (required).'),
      lifetime: convertedBy(queryText(), (text) =>
        checkLifetime(text === undefined ? 600 : integerParameter(text, 'lifetime'), 'lifetime'),
      ).describe('Seconds the signature lasts, 1 to 604800 (default 600).'),
      svc: choiceOr(
        'gcs',
        isSignUrlService,
        () => new ValueError('Parameter "svc" must be either empty (which defaults to "gcs"), "gcs", "s3" or "swift"'),
      ).describe('gcs (default), s3 or swift.'),
      op: choiceOr(
        'read',
        isOperation,
        () =>
          new ValueError(
            'Parameter "op" must be either empty (which defaults to "read"), "read", "write", or "delete".',
          ),
      ).describe('read (default), write or delete.'),
    }),
    success: { status: 200, type: 'text/html; charset=utf-8', description: 'The signed URL.' },
    raises: [AccessDenied, RSENotFound, UnsupportedOperation, ErrorLoadingCredentials],
  } satisfies RouteOptions;
  const signUrl: HandlerFor<typeof options> = async (ctx, { query }): Promise<void> => {
    ctx.set('Access-Control-Expose-Headers', 'X-Svc-Auth-Token');
    const account = ctx.get('X-Svc-Account');
    if (!account) throw new ValueError('Parameter "account" not found.');
    const { rse: rseName, url, lifetime, svc: service, op: operation } = query;
    const issuer = ctx.state.issuer!;
    if (!maySign(ctx))
      throw new AccessDenied(
        `Account ${issuer} can not get signed URL for rse=${rseName}, service=${service}, operation=${operation}, url=${url}, lifetime=${lifetime}`,
      );
    const rse = await activeRse(services, rseName);
    if (rse.attributes.sign_url === undefined)
      throw new UnsupportedOperation(`The URLs of RSE ${rseName} are not signed: it has no sign_url attribute`);
    const style = rse.attributes.s3_url_style;
    let signed: string;
    try {
      signed = await services.urlSigner.sign({
        rse: { id: rse.id, name: rse.rse },
        service,
        operation,
        url,
        lifetime,
        ...(typeof style === 'string' ? { s3UrlStyle: style } : {}),
        now: dateOf(services.clock),
      });
    } catch (error) {
      throw signingError(error);
    }
    sendText(ctx, signed);
  };
  routes.get('/credentials/signurl', options, signUrl);
  routes.get('/credentials/signur', options, signUrl);
};
