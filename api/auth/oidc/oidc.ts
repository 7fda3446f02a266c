import type { CommandContext } from '../../../commands/handleCommand.ts';
import type { Clock } from '../../../infra/clock.ts';
import type { Logger } from '../../../infra/logger.ts';
import type { OidcProviderConfig } from '../../../infra/oidcProviders.ts';
import type { ReadStore } from '../../../infra/readstore/readStore.ts';
import type { ReadModels } from '../../../projections/runtime/readModels.ts';
import type { SessionCheck, TokenStore } from '../tokenStore.ts';
import { JwtTokens } from './jwtTokens.ts';
import { OidcLogin } from './oidcLogin.ts';
import { TrustedIssuers } from './trustedIssuers.ts';

/** OpenID Connect in one place: the trusted providers, their JWTs as tokens, and the login flow. */
export class Oidc {
  readonly issuers: TrustedIssuers;
  readonly jwt: JwtTokens;
  readonly login: OidcLogin;

  constructor(
    providers: readonly OidcProviderConfig[],
    parts: Readonly<{
      readStore: ReadStore;
      readModels: ReadModels;
      commands: CommandContext;
      tokens: TokenStore;
      sessions: SessionCheck;
      logger: Logger;
      clock: Clock;
    }>,
  ) {
    this.issuers = new TrustedIssuers(providers, parts.readStore, parts.clock);
    this.jwt = new JwtTokens(this.issuers, parts.readModels, parts.sessions, parts.clock);
    this.login = new OidcLogin(
      this.issuers,
      parts.readStore,
      parts.readModels,
      parts.commands,
      parts.tokens,
      parts.logger.child({ component: 'oidc' }),
      parts.clock,
    );
  }

  /** Whether any provider is trusted (DMS_OIDC_PROVIDERS). */
  get enabled(): boolean {
    return this.issuers.all.length > 0;
  }
}
