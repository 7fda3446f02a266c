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

const counts = new Map<string, number>();

export const countLogin = (method: LoginMethod, outcome: LoginOutcome): void => {
  const key = `${method} ${outcome}`;
  counts.set(key, (counts.get(key) ?? 0) + 1);
};

export const loginCounts = (): readonly Readonly<{ method: LoginMethod; outcome: LoginOutcome; count: number }>[] =>
  [...counts].map(([key, count]) => {
    const [method, outcome] = key.split(' ') as [LoginMethod, LoginOutcome];
    return { method, outcome, count };
  });
