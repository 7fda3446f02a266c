import type { ServiceConfig } from '../../infra/serviceConfig.ts';
import type { Collection, CollectionSpec, Document, ReadStore } from '../../infra/readstore/readStore.ts';
import { physicalCollection, projectionStateCollection, type ProjectionStateDocument } from './projectionState.ts';
import { allProjections } from '../index.ts';
import type { AnyProjection } from '../projection.ts';
import { ProjectionStores } from './projectionStores.ts';

/**
 * Query access to projected collections. Callers name the logical collection (`accounts`); this
 * resolves it to the store of the projection's group and the generation that currently serves
 * reads (`accounts__g2`), so a rebuild can fill a new generation beside the old one and switch
 * readers over in one step, and each group can live in a store of its own.
 */
export class ReadModels {
  private readonly owners = new Map<string, { projection: string; store: ReadStore }>();
  private readonly serving = new Map<string, number>();

  constructor(readonly stores: ProjectionStores) {
    for (const group of stores.groups) {
      const store = stores.storeOfGroup(group.name);
      for (const projection of group.projections)
        for (const collection of projection.collections)
          this.owners.set(collection.name, { projection: projection.name, store });
    }
  }

  /** Read models of `projections` (default all) in one store: tests, and tools over one file. */
  static in(store: ReadStore, projections: readonly AnyProjection[] = allProjections): ReadModels {
    return new ReadModels(ProjectionStores.in(store, [{ name: 'all', projections }]));
  }

  /**
   * The read models of the configured layout beside `shared` (openStores' read store), each
   * group's store opened once; `close` closes those (not `shared`).
   */
  static async open(config: ServiceConfig, shared: ReadStore): Promise<ReadModels> {
    return new ReadModels(await ProjectionStores.open(config, shared));
  }

  /** Closes the group stores `open` opened. */
  close(): Promise<void> {
    return this.stores.close();
  }

  /** The shared store: sessions, heartbeats and traces, outside the projections. */
  get store(): ReadStore {
    return this.stores.shared;
  }

  /** Reloads the serving generations, e.g. in an API process whose projector runs elsewhere. */
  async refresh(): Promise<void> {
    for (const store of this.stores.distinctStores())
      for await (const state of store.collection<ProjectionStateDocument>(projectionStateCollection).find({}))
        this.serving.set(state._id, state.servingGeneration);
  }

  /**
   * Keeps the serving generations current in a process without projections, so it follows the
   * projector when a rebuild switches reads over. Returns a function that stops it.
   */
  refreshEvery(intervalMs: number, onError: (error: unknown) => void): () => void {
    const timer = setInterval(() => {
      this.refresh().catch(onError);
    }, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  setServingGeneration(projectionName: string, generation: number): void {
    this.serving.set(projectionName, generation);
  }

  servingGeneration(projectionName: string): number {
    return this.serving.get(projectionName) ?? 1;
  }

  collection<T extends Document>(logical: CollectionSpec): Collection<T> {
    const owner = this.owners.get(logical.name);
    if (!owner) throw new Error(`No projection owns the collection ${logical.name}`);
    return owner.store.collection<T>(physicalCollection(logical, this.servingGeneration(owner.projection)));
  }
}
