import type { Collection, CollectionSpec, Document, ReadStore } from '../../infra/readstore/readStore.ts';
import type { AnyProjection } from '../projection.ts';
import { physicalCollection, projectionStateCollection, type ProjectionStateDocument } from './projectionState.ts';

/**
 * Query access to projected collections. Callers name the logical collection (`accounts`); this
 * resolves it to the generation that currently serves reads (`accounts__g2`), so a rebuild can
 * fill a new generation beside the old one and switch readers over in one step.
 */
export class ReadModels {
  private readonly owners = new Map<string, string>();
  private readonly serving = new Map<string, number>();

  constructor(
    readonly store: ReadStore,
    projections: readonly AnyProjection[],
  ) {
    for (const projection of projections) {
      for (const collection of projection.collections) this.owners.set(collection.name, projection.name);
    }
  }

  /** Reloads the serving generations, e.g. in an API process whose projector runs elsewhere. */
  async refresh(): Promise<void> {
    for await (const state of this.store.collection<ProjectionStateDocument>(projectionStateCollection).find({})) {
      this.serving.set(state._id, state.servingGeneration);
    }
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
    return this.store.collection<T>(physicalCollection(logical, this.servingGeneration(owner)));
  }
}
