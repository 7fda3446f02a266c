import { PosixStorage } from './posixStorage.ts';
import type { FileDeletion, Storage } from './storage.ts';

/**
 * The storages this process can delete on, chosen by the RSE's `delete` protocol: `posix` for
 * Rucio's posix implementation (`file` PFNs on this machine), `mock` for its mock implementation
 * (nothing to delete, as Rucio's mock protocol). Other protocols (root, davs, srm, ...) have no
 * client here: their RSEs are left alone by the deletion daemons, which say so.
 */
export type StorageFactory = () => Storage;

/** Rucio's mock protocol: deleting always works and touches nothing. */
export class MockStorage implements Storage {
  readonly name = 'mock';
  async delete(pfns: readonly string[]): Promise<FileDeletion[]> {
    return pfns.map((pfn) => ({ pfn, outcome: 'deleted' as const }));
  }
  async space(): Promise<undefined> {
    return undefined;
  }
}

/** What choosing a storage reads of an RSE protocol: Rucio's implementation class and the scheme. */
export type ProtocolIdentity = Readonly<{ impl: string; scheme: string }>;

const FACTORIES: Readonly<Record<string, StorageFactory>> = {
  posix: () => new PosixStorage(),
  mock: () => new MockStorage(),
};

/** The storage kind a protocol's implementation names, if this process has one. */
export const storageKindOf = (protocol: ProtocolIdentity): string | undefined => {
  if (protocol.impl.startsWith('rucio.rse.protocols.posix.')) return 'posix';
  if (protocol.impl.startsWith('rucio.rse.protocols.mock.') || protocol.scheme === 'mock') return 'mock';
  return undefined;
};

export class Storages {
  private readonly made = new Map<string, Storage>();

  constructor(private readonly factories: Readonly<Record<string, StorageFactory>> = FACTORIES) {}

  /** The storage behind a protocol, made on first use; undefined when none here speaks it. */
  forProtocol(protocol: ProtocolIdentity): Storage | undefined {
    const kind = storageKindOf(protocol);
    if (!kind) return undefined;
    let storage = this.made.get(kind);
    if (!storage) {
      const factory = this.factories[kind];
      if (!factory) return undefined;
      storage = factory();
      this.made.set(kind, storage);
    }
    return storage;
  }
}

export const createStorages = (factories?: Readonly<Record<string, StorageFactory>>): Storages =>
  new Storages(factories);
