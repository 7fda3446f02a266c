/**
 * Counts of login attempts since this process started, by method and outcome, for operators:
 * the metrics endpoint reads `loginCounts()`; every attempt is also logged.
 */
export type LoginMethod = 'userpass' | 'x509' | 'gss' | 'ssh';

export type LoginOutcome =
  /** A token was issued. */
  | 'succeeded'
  /** Refused: wrong credentials, an unknown identity, an account it may not use. */
  | 'failed'
  /** Held back by the throttle before its credentials were checked. */
  | 'delayed'
  /** Refused by the throttle without checking its credentials. */
  | 'refused';

type LoginCount = { method: LoginMethod; outcome: LoginOutcome; count: number };

/** By `<method> <outcome>`. */
const counts = new Map<string, LoginCount>();

export const countLogin = (method: LoginMethod, outcome: LoginOutcome): void => {
  const key = `${method} ${outcome}`;
  const counted = counts.get(key);
  if (counted) counted.count += 1;
  else counts.set(key, { method, outcome, count: 1 });
};

export const loginCounts = (): readonly Readonly<LoginCount>[] =>
  [...counts.values()].map((counted) => ({ ...counted }));
