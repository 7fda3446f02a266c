import type { Middleware } from 'koa';
import { CannotAuthenticate, ValueError } from '../../domain/shared/errors.ts';
import { missingHeaders } from '../clientHeaders.ts';
import type { AppState, Services } from '../services.ts';
import { looksLikeJwt } from './oidc/jwtTokens.ts';

/**
 * The token check of every authenticated route (Rucio's `request_auth_env`): no token is 400
 * ValueError (naming the header), an unknown or expired token 401 CannotAuthenticate, which makes the Python client
 * log in again and retry.
 */
export const authenticate =
  (services: Services): Middleware<AppState> =>
  async (ctx, next) => {
    const token = ctx.get('X-Svc-Auth-Token');
    if (!token) throw new ValueError(missingHeaders(ctx, 'Token must be set', ['X-Svc-Auth-Token']));
    // A JWT of a trusted OpenID provider is a token too (api/auth/oidc/jwtTokens.ts): refused with the reason.
    const info =
      (await services.tokens.validate(token)) ??
      (services.oidc.enabled && looksLikeJwt(token) ? await services.oidc.jwt.authenticate(token) : undefined);
    if (!info) throw new CannotAuthenticate('Cannot authenticate with given credentials');
    ctx.state.issuer = info.account;
    ctx.state.identity = info.identity;
    ctx.state.identityType = info.identityType;
    await next();
  };
