import { integer, number, text, DAY } from '../config/settingKinds.ts';

/** The `/config` options of logins: failed attempts and the tokens of trusted OpenID providers. */
export const AUTH_SETTINGS = {
  /**
   * Failed logins (api/auth/loginThrottle.ts): free failures per identity from one client address,
   * per identity from all addresses together, and distinct failing identities per address (one
   * user's typos count once there). Past one of them each attempt waits `login_delay_base`
   * seconds, twice as long after every further failure, up to `login_delay_max` (attempts that
   * would wait longer are refused at once). A success clears its identity's counts; counts end
   * `login_failure_window` seconds after their last failure.
   */
  loginFreeFailures: integer('auth', 'login_free_failures', 5, 0, 1000),
  loginIdentityFreeFailures: integer('auth', 'login_identity_free_failures', 20, 0, 100_000),
  loginAddressFreeIdentities: integer('auth', 'login_address_free_identities', 20, 0, 10_000),
  loginDelayBase: number('auth', 'login_delay_base', 1, 0, 60),
  loginDelayMax: number('auth', 'login_delay_max', 30, 0, 3600),
  loginFailureWindow: number('auth', 'login_failure_window', 900, 1, 7 * DAY),
  /**
   * JWTs of trusted OpenID providers (Rucio's `oidc` section): every audience in
   * `expected_audience` must be in the token's `aud`, and every scope in `expected_scope` in its
   * `scope` (space-separated, as Rucio reads them); the code flow asks for them too. The keys of
   * an issuer are fetched again for an unknown key id at most once per `jwks_refresh_interval`
   * seconds (30), and when older than `jwks_max_age` (an hour).
   */
  oidcExpectedAudience: text('oidc', 'expected_audience', 'rucio'),
  oidcExpectedScope: text('oidc', 'expected_scope', 'openid profile'),
  oidcJwksRefreshInterval: number('oidc', 'jwks_refresh_interval', 30, 0, DAY),
  oidcJwksMaxAge: number('oidc', 'jwks_max_age', 3600, 60, 30 * DAY),
  /**
   * The trusted provider (its nickname in DMS_OIDC_PROVIDERS) this service asks for tokens of its
   * own, as its client (Rucio's `admin_issuer`): the tokens of transfers between RSEs with
   * `oidc_support`. Empty: the file's first provider. A token is handed out again while it has
   * more than `token_min_lifetime` seconds left, and asked for anew after that (Rucio: 300).
   */
  oidcAdminIssuer: text('oidc', 'admin_issuer', ''),
  oidcTokenMinLifetime: integer('oidc', 'token_min_lifetime', 300, 0, DAY),
} as const;
