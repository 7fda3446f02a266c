import { SETTINGS, settingValue, type ConfigSections } from '../../domain/config/settings.ts';
import { CannotAuthenticate, RucioError } from '../../domain/shared/errors.ts';
import { configSection } from '../../projections/config/configQueries.ts';
import type { AppContext, Services } from '../services.ts';
import { countLogin, type LoginMethod } from './loginStats.ts';
import type { LoginThrottle, ThrottlePolicy } from './loginThrottle.ts';

/** The throttle's rules, from the `auth` section of /config (domain/config/settings.ts). */
export const throttlePolicy = async (services: Services): Promise<ThrottlePolicy> => {
  const section = await configSection(services.readModels, 'auth');
  const sections: ConfigSections = section ? { auth: section.options } : {};
  return {
    freeFailures: settingValue(sections, SETTINGS.loginFreeFailures),
    identityFreeFailures: settingValue(sections, SETTINGS.loginIdentityFreeFailures),
    addressFreeIdentities: settingValue(sections, SETTINGS.loginAddressFreeIdentities),
    baseDelayMs: settingValue(sections, SETTINGS.loginDelayBase) * 1000,
    maxDelayMs: settingValue(sections, SETTINGS.loginDelayMax) * 1000,
    windowMs: settingValue(sections, SETTINGS.loginFailureWindow) * 1000,
  };
};

/** A refusal of the login itself (401), as opposed to a malformed request or a server error. */
const isLoginRefusal = (ctx: AppContext, error: unknown): error is RucioError =>
  error instanceof RucioError && (ctx.state.errorStatus?.[error.exceptionClass] ?? error.httpStatus) === 401;

/**
 * Runs one login attempt, counted (api/auth/loginStats.ts) and logged for operators with the
 * identity and the client's address: a token issued is a success, a 401 a failure (then
 * `onFailure` runs before the refusal goes out).
 */
export const loginAttempt = async (
  ctx: AppContext,
  method: LoginMethod,
  identity: string,
  login: () => Promise<void>,
  onFailure: () => void = () => undefined,
): Promise<void> => {
  const facts = { method, identity, address: ctx.ip };
  try {
    await login();
  } catch (error) {
    if (isLoginRefusal(ctx, error)) {
      countLogin(method, 'failed');
      ctx.state.logger.warn(
        { ...facts, account: ctx.get('X-Svc-Account') || undefined, reason: error.exceptionClass },
        'login failed',
      );
      onFailure();
    }
    throw error;
  }
  if (ctx.status === 200) {
    countLogin(method, 'succeeded');
    ctx.state.logger.info({ ...facts, account: ctx.response.get('X-Svc-Auth-Account') }, 'login succeeded');
  }
};

/**
 * A userpass (or SSH) attempt under the throttle (api/auth/loginThrottle.ts): it waits its turn
 * when its identity, its identity from this address, or this address has failed too often (or is
 * refused when the turn is too far off), then runs; a failure is counted, right credentials clear
 * the identity's counts. An SSH login's identity is the account it logs in to: its client names no
 * key.
 */
export const throttledLogin = async (
  ctx: AppContext,
  services: Services,
  throttle: LoginThrottle,
  username: string,
  /** Runs the login, setting `credentialsValid` as soon as the password is known to be right. */
  login: (outcome: { credentialsValid: boolean }) => Promise<void>,
  method: 'userpass' | 'ssh' = 'userpass',
): Promise<void> => {
  const attempt = { identity: `${method === 'ssh' ? 'SSH' : 'USERPASS'} ${username}`, address: ctx.ip };
  const policy = await throttlePolicy(services);
  const admission = throttle.admit(attempt, policy);
  if (admission.refused) {
    countLogin(method, 'refused');
    ctx.state.logger.warn(
      { method, identity: username, address: ctx.ip, retryAfterMs: admission.retryAfterMs },
      'login refused: too many failures',
    );
    throw new CannotAuthenticate(
      `Too many failed logins for this identity or address; try again in ${Math.ceil(admission.retryAfterMs / 1000)} s.`,
    );
  }
  if (admission.waitMs > 0) {
    countLogin(method, 'delayed');
    await new Promise((resolve) => setTimeout(resolve, admission.waitMs));
  }
  const outcome = { credentialsValid: false };
  await loginAttempt(
    ctx,
    method,
    username,
    () => login(outcome),
    () => {
      // A right password to an account the identity may not use is no guess at the password.
      const delayMs = throttle.failed(attempt, policy, !outcome.credentialsValid);
      if (delayMs > 0)
        ctx.state.logger.warn(
          { identity: username, address: ctx.ip, delayMs },
          'login throttled: further attempts wait',
        );
    },
  );
  if (outcome.credentialsValid) throttle.succeeded(attempt);
};
