import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { checksumFile } from '../../infra/transfer/checksums.ts';
import { rseWithProtocols } from '../api/replicaSupport.ts';
import { rseName } from '../api/rseSupport.ts';
import { expectStatus, type TestServer } from './server.ts';

/** RSEs on directories of this machine (the posix tool's), links between RSEs, and real files on them. */

/** A `file` protocol under `root` that serves reads, writes and third-party copies. */
export const fileProtocol = (root: string) => ({
  file: {
    hostname: 'localhost',
    port: 0,
    prefix: root,
    impl: 'rucio.rse.protocols.posix.Default',
    domains: {
      lan: { read: 1, write: 1, delete: 1 },
      wan: { read: 1, write: 1, delete: 1, third_party_copy_read: 1, third_party_copy_write: 1 },
    },
  },
});

/** Sets RSE attributes (values as text, as a client sends them). */
export const setRseAttributes = async (
  server: TestServer,
  rse: string,
  attributes: Readonly<Record<string, string | boolean>>,
): Promise<void> => {
  for (const [key, value] of Object.entries(attributes))
    expectStatus(await server.root('POST', `/rses/${rse}/attr/${key}`, { body: { value } }), 201);
};

/** An RSE on a directory below `base`, with `properties` (rse_type, staging_area, ...) and attributes. */
export const posixRse = async (
  server: TestServer,
  base: string,
  options: Readonly<{
    prefix?: string;
    name?: string;
    properties?: object;
    attributes?: Readonly<Record<string, string | boolean>>;
    root?: string;
  }> = {},
): Promise<{ rse: string; id: string; root: string }> => {
  const name = options.name ?? rseName(options.prefix ?? 'POSIX');
  const root = options.root ?? join(base, name);
  const created = await rseWithProtocols(server, [fileProtocol(root)], options.properties ?? {}, name);
  await setRseAttributes(server, created.rse, options.attributes ?? {});
  return { ...created, root };
};

/** A directed link between two RSEs. */
export const linkRses = async (server: TestServer, source: string, dest: string, distance = 1): Promise<void> => {
  expectStatus(await server.root('POST', `/rses/${source}/distances/${dest}`, { body: { distance } }), 201);
};

/** The local path of a file on a posix RSE, by its lfn2pfn algorithm. */
export const pathOnRse = async (server: TestServer, rse: string, scope: string, name: string): Promise<string> => {
  const pfns = expectStatus(await server.root('GET', `/rses/${rse}/lfns2pfns?lfn=${scope}:${name}`), 200).json<
    Record<string, string>
  >();
  return pfns[`${scope}:${name}`]!.replace('file://localhost', '');
};

/** Writes a real file at its place on a posix RSE and registers it there with its size and adler32. */
export const placeFile = async (
  server: TestServer,
  rse: string,
  scope: string,
  name: string,
  content: string,
): Promise<void> => {
  const path = await pathOnRse(server, rse, scope, name);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  const { adler32 } = await checksumFile(path, 'adler32');
  expectStatus(
    await server.root('POST', '/replicas', {
      body: { rse, files: [{ scope, name, bytes: Buffer.byteLength(content), adler32 }] },
    }),
    201,
  );
};
