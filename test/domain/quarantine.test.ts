import type { QuarantineEvent } from '../../domain/quarantine/quarantine.ts';
import { quarantineDecider, type QuarantineReplicas } from '../../domain/quarantine/quarantineDecider.ts';
import { InvalidPath } from '../../domain/shared/errors.ts';
import { AT, deciderSpec, metadata } from '../support/deciderSpec.ts';

const given = deciderSpec(quarantineDecider);
const rse = { rse: 'SITE_DISK', rseId: 'a'.repeat(32) };
const dark = (path: string, scope: string | null = null, name: string | null = null) => ({
  path,
  scope,
  name,
  bytes: null,
});
const quarantine = (replicas: ReturnType<typeof dark>[], registered: string[] = []): QuarantineReplicas => ({
  type: 'QuarantineReplicas',
  data: { ...rse, replicas, registered: new Set(registered) },
  metadata: metadata(),
});
const quarantined = (replicas: ReturnType<typeof dark>[]): QuarantineEvent => ({
  type: 'ReplicasQuarantined',
  data: { ...rse, replicas, quarantinedAt: AT },
});

describe('Quarantine decider (dark files of an RSE)', () => {
  it('quarantines paths once, skipping registered replicas and paths listed twice', () =>
    given([quarantined([dark('/old')])])
      .when(quarantine([dark('/old'), dark('/new'), dark('/new'), dark('/known', 'mc', 'f1')], ['mc:f1']))
      .then([quarantined([dark('/new')])]));

  it('refuses a path that would climb out of the RSE’s prefix, quarantining nothing (issue 33)', () =>
    given([])
      .when(quarantine([dark('/new'), dark('a/../../outside/t1')]))
      .thenThrows(InvalidPath, /The path 'a\/\.\.\/\.\.\/outside\/t1' holds the path segment '\.\.'/));

  it('changes nothing when every path is known or registered', () =>
    given([quarantined([dark('/old')])])
      .when(quarantine([dark('/old'), dark('/x', 'mc', 'f1')], ['mc:f1']))
      .thenNothingHappened());
});
