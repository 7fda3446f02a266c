import { createHash, randomUUID } from 'node:crypto';
import { didStreamName } from '../../domain/did/did.ts';
import { quarantineStreamName } from '../../domain/quarantine/quarantine.ts';
import { OBSOLETE_TOMBSTONE } from '../../domain/replica/replica.ts';
import { scopeStreamName } from '../../domain/scope/scope.ts';
import { eventUpcasters } from '../../domain/upcasters.ts';
import type { TestServer } from './server.ts';

/**
 * Data stored before names were checked (issue 33): events written straight into the event store,
 * as the code of that time wrote them, which today's commands would refuse. Each helper waits
 * until the read models show what it planted.
 */

const plant = async (server: TestServer, stream: string, events: readonly { type: string; data: unknown }[]) => {
  const at = new Date().toISOString();
  const { position } = await server.runtime.eventStore.appendToStream(
    stream,
    events.map(({ type, data }) => ({
      id: randomUUID(),
      type,
      data,
      metadata: {
        account: 'root',
        requestId: 'planted-before-names-were-checked',
        at,
        schemaVersion: eventUpcasters.currentVersion(type),
      },
    })),
    'any',
  );
  if (!(await server.runtime.services.progress.waitFor(position, 20_000)))
    throw new Error(`the read models do not show the events planted on ${stream}`);
};

export const plantScope = (server: TestServer, scope: string): Promise<void> =>
  plant(server, scopeStreamName(scope), [
    { type: 'ScopeAdded', data: { scope, account: 'root', addedAt: new Date().toISOString() } },
  ]);

export type PlantedReplica = Readonly<{ rse: string; rseId: string; obsolete?: boolean; path?: string | null }>;

/** A file of `bytes` with adler32 `adler32`, registered with replicas on the RSEs given. */
export const plantFile = (
  server: TestServer,
  file: Readonly<{ scope: string; name: string; bytes: number; adler32: string }>,
  replicas: readonly PlantedReplica[],
): Promise<void> => {
  const now = new Date().toISOString();
  return plant(server, didStreamName(file.scope, file.name), [
    {
      type: 'DidCreated',
      data: {
        scope: file.scope,
        name: file.name,
        didType: 'FILE',
        account: 'root',
        createdAt: now,
        expiredAt: null,
        monotonic: false,
        isNew: null,
        bytes: file.bytes,
        adler32: file.adler32,
        md5: null,
        guid: null,
        events: null,
        replicas: replicas.map(({ rse, rseId, obsolete, path }) => ({
          scope: file.scope,
          name: file.name,
          rse,
          rseId,
          bytes: file.bytes,
          md5: null,
          adler32: file.adler32,
          path: path ?? null,
          state: 'AVAILABLE',
          tombstone: obsolete ? OBSOLETE_TOMBSTONE : null,
          lock: null,
          addedAt: now,
        })),
      },
    },
  ]);
};

/** Paths quarantined on an RSE, as the dark reaper will find them. */
export const plantQuarantine = (
  server: TestServer,
  rse: Readonly<{ rse: string; id: string }>,
  paths: readonly string[],
) =>
  plant(server, quarantineStreamName(rse.rse), [
    {
      type: 'ReplicasQuarantined',
      data: {
        rse: rse.rse,
        rseId: rse.id,
        replicas: paths.map((path) => ({ path, scope: null, name: null, bytes: null })),
        quarantinedAt: new Date().toISOString(),
      },
    },
  ]);

/**
 * The path below a prefix where the `hash` lfn2pfn algorithm puts a file, computed by hand: the
 * service refuses to compute it for a name that climbs, which is what the attacks plant.
 */
export const hashedPath = (scope: string, name: string): string => {
  const md5 = createHash('md5').update(`${scope}:${name}`).digest('hex');
  const directories = scope.startsWith('user') || scope.startsWith('group') ? scope.replaceAll('.', '/') : scope;
  return `${directories}/${md5.slice(0, 2)}/${md5.slice(2, 4)}/${name}`;
};
