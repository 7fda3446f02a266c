import { expect } from 'chai';
import { uniqueName } from '../support/events.ts';
import { expectStatus, type TestServer } from '../support/server.ts';
import { createRse, rseName } from './rseSupport.ts';

/** RSEs with protocols, and replica registration through the API, for the replica tests. */

export const protocol = (
  scheme: string,
  hostname: string,
  priorities: { wan?: number | null; lan?: number | null } = {},
  extra: object = {},
) => {
  const wan = priorities.wan === undefined ? 1 : priorities.wan;
  const lan = priorities.lan === undefined ? null : priorities.lan;
  return {
    hostname,
    port: 1094,
    prefix: '/data',
    impl: 'rucio.rse.protocols.xrootd.Default',
    domains: {
      lan: { read: lan, write: lan, delete: lan },
      wan: { read: wan, write: wan, delete: wan, third_party_copy_read: wan, third_party_copy_write: wan },
    },
    ...extra,
  };
};

/** A new RSE with the given properties and protocols (`scheme` → body). */
export const rseWithProtocols = async (
  server: TestServer,
  protocols: Record<string, object>[] = [{ root: protocol('root', 'xrd.example.org') }],
  properties: object = {},
  name = rseName('SITE'),
): Promise<{ rse: string; id: string }> => {
  const rse = await createRse(server, properties, name);
  for (const entry of protocols) {
    for (const [scheme, body] of Object.entries(entry))
      expectStatus(await server.root('POST', `/rses/${rse}/protocols/${scheme}`, { body }), 201);
  }
  const id = expectStatus(await server.root('GET', `/rses/${rse}`), 200).json<{ id: string }>().id;
  return { rse, id };
};

export const fileItem = (scope: string, name: string, extra: object = {}) => ({
  scope,
  name,
  bytes: 100,
  adler32: '0cc737eb',
  ...extra,
});

/** Registers replicas as root (or `token`) through POST /replicas, expecting 201. */
export const addReplicas = async (server: TestServer, rse: string, files: object[], token?: string): Promise<void> => {
  const response = await server.call('POST', '/replicas', { body: { rse, files }, token: token ?? server.rootToken });
  expect(response.status, response.text).to.equal(201);
};

/** A line of `POST /replicas/list` as the tests read it; the other fields are compared whole. */
export type ListedReplicaJson = Readonly<{
  scope: string;
  name: string;
  pfns: Readonly<Record<string, Readonly<{ domain: string; priority: number; rse: string; [field: string]: unknown }>>>;
  rses: Readonly<Record<string, readonly string[]>>;
  states: Readonly<Record<string, string>>;
  parents?: readonly string[];
  [field: string]: unknown;
}>;

export const listReplicas = async (server: TestServer, body: object, query = '') =>
  expectStatus(await server.root('POST', `/replicas/list${query}`, { body }), 200).lines<ListedReplicaJson>();

export const newScopeName = (): string => uniqueName('s.');
