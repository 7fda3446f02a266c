import { ConfigurationInvalidError, type ServiceConfig } from '../../infra/serviceConfig.ts';
import type { ReadStore } from '../../infra/readstore/readStore.ts';
import { openReadStoreAt, readStorePlace, samePlace, type ReadStorePlace } from '../../infra/stores.ts';
import { allProjections, projectionGroups, type ProjectionGroup } from '../index.ts';
import type { AnyProjection } from '../projection.ts';

/** The one group of the `single` layout: every projection, in the shared store. */
export const SINGLE_GROUP_NAME = 'all';

/**
 * The groups a layout runs (DMS_PROJECTION_LAYOUT): the projection groups of projections/index.ts,
 * or, for `single`, every projection in one group.
 */
export const layoutGroups = (layout: ServiceConfig['projectionLayout']): readonly ProjectionGroup[] =>
  layout === 'single' ? [{ name: SINGLE_GROUP_NAME, projections: allProjections }] : projectionGroups;

/**
 * The read stores of the read models: the shared one (sessions, heartbeats of the API, the
 * generations of a single-group layout) and each projection group's. A group's store holds its
 * projections' collections, their states, checkpoints and rebuild requests, and the heartbeats
 * of the projectors running it, so that each group's writer commits alone, and a group can live
 * in another file or database than the others. Groups placed together share one store.
 */
export class ProjectionStores {
  private readonly groupByName: ReadonlyMap<string, ProjectionGroup>;
  private readonly groupByProjection: ReadonlyMap<string, ProjectionGroup>;

  private constructor(
    readonly shared: ReadStore,
    readonly groups: readonly ProjectionGroup[],
    private readonly storeByGroup: ReadonlyMap<string, ReadStore>,
    /** The stores this opened (not `shared`), closed by `close`. */
    private readonly opened: readonly ReadStore[],
  ) {
    this.groupByName = new Map(groups.map((group) => [group.name, group]));
    this.groupByProjection = new Map(
      groups.flatMap((group) => group.projections.map((projection) => [projection.name, group] as const)),
    );
  }

  /** Every group in one store (tests, tools over one file, the single-group layout). */
  static in(store: ReadStore, groups: readonly ProjectionGroup[] = layoutGroups('single')): ProjectionStores {
    return ProjectionStores.of(
      store,
      groups.map((group) => ({ group, store })),
    );
  }

  /** Groups in stores their caller opened (and closes). */
  static of(
    shared: ReadStore,
    placed: readonly Readonly<{ group: ProjectionGroup; store: ReadStore }>[],
  ): ProjectionStores {
    return new ProjectionStores(
      shared,
      placed.map(({ group }) => group),
      new Map(placed.map(({ group, store }) => [group.name, store])),
      [],
    );
  }

  /**
   * The stores of the configured layout beside `shared` (openStores' read store): each group's
   * place opened once (groups whose place is the shared store's use it). `only` limits them to
   * some groups (a projector process running those); `backgroundCheckpoints` is for the process
   * that writes them.
   */
  static async open(
    config: ServiceConfig,
    shared: ReadStore,
    options: Readonly<{ only?: readonly string[]; backgroundCheckpoints?: boolean }> = {},
  ): Promise<ProjectionStores> {
    const groups = layoutGroups(config.projectionLayout);
    assertKnownGroups(groups, [
      ...(options.only ?? []),
      ...(config.readStore.kind === 'mongodb' ? Object.keys(config.readStore.groupUrls) : []),
    ]);
    const chosen = options.only ? groups.filter((group) => options.only!.includes(group.name)) : groups;
    const sharedPlace = readStorePlace(config);
    const places: { place: ReadStorePlace; store: ReadStore }[] = [{ place: sharedPlace, store: shared }];
    const opened: ReadStore[] = [];
    const storeByGroup = new Map<string, ReadStore>();
    try {
      for (const group of chosen) {
        const place = config.projectionLayout === 'single' ? sharedPlace : readStorePlace(config, group.name);
        let known = places.find((candidate) => samePlace(candidate.place, place));
        if (!known) {
          const store = await openReadStoreAt(place, { backgroundCheckpoints: options.backgroundCheckpoints ?? false });
          opened.push(store);
          places.push((known = { place, store }));
        }
        storeByGroup.set(group.name, known.store);
      }
    } catch (error) {
      for (const store of opened) await store.close();
      throw error;
    }
    return new ProjectionStores(shared, chosen, storeByGroup, opened);
  }

  group(name: string): ProjectionGroup {
    const group = this.groupByName.get(name);
    if (!group) throw new Error(`No projection group ${name} here`);
    return group;
  }

  groupOf(projectionName: string): ProjectionGroup | undefined {
    return this.groupByProjection.get(projectionName);
  }

  storeOfGroup(name: string): ReadStore {
    const store = this.storeByGroup.get(name);
    if (!store) throw new Error(`No projection group ${name} here`);
    return store;
  }

  /** The store of a projection's group; undefined for a projection of no group here. */
  storeOf(projectionName: string): ReadStore | undefined {
    const group = this.groupByProjection.get(projectionName);
    return group ? this.storeByGroup.get(group.name) : undefined;
  }

  /** Every projection of these groups. */
  projections(): AnyProjection[] {
    return this.groups.flatMap((group) => group.projections);
  }

  /** Each store holding a group, once. */
  distinctStores(): ReadStore[] {
    return [...new Set(this.storeByGroup.values())];
  }

  /** Closes the stores `open` opened; the shared one is its opener's to close. */
  async close(): Promise<void> {
    for (const store of this.opened) await store.close();
  }
}

const assertKnownGroups = (groups: readonly ProjectionGroup[], names: readonly string[]): void => {
  const unknown = names.filter((name) => !groups.some((group) => group.name === name));
  if (unknown.length > 0)
    throw new ConfigurationInvalidError([
      `unknown projection groups: ${unknown.join(', ')} (known: ${groups.map((group) => group.name).join(', ')})`,
    ]);
};
