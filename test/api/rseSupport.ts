import { uniqueName } from '../support/events.ts';
import { expectStatus, type TestServer } from '../support/server.ts';

/** A fresh RSE name (upper case, as Rucio's name rule wants). */
export const rseName = (prefix = 'RSE'): string => uniqueName(`${prefix}_`).toUpperCase();

export const createRse = async (server: TestServer, body: object = {}, name = rseName()): Promise<string> => {
  expectStatus(await server.root('POST', `/rses/${name}`, { body }), 201);
  return name;
};

export const getRse = async (server: TestServer, name: string) =>
  expectStatus(await server.root('GET', `/rses/${name}`), 200).json<Record<string, unknown>>();

/** The names an expression selects, sorted. */
export const selected = async (server: TestServer, expression: string): Promise<string[]> =>
  expectStatus(await server.root('GET', `/rses/?expression=${encodeURIComponent(expression)}`), 200)
    .lines<{ rse: string }>()
    .map((line) => line.rse)
    .sort();

export const webdav = (overrides: object = {}) => ({
  hostname: 'eos.example.org',
  port: 443,
  prefix: '/eos/data',
  impl: 'rucio.rse.protocols.webdav.Default',
  domains: {
    lan: { read: 1, write: 1, delete: 1 },
    wan: { read: 1, write: 1, delete: 1, third_party_copy_read: 1, third_party_copy_write: 1 },
  },
  ...overrides,
});
