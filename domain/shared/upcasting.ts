import type { Event } from './event.ts';

/**
 * Event schema evolution. A stored event is never rewritten: when an event's data changes shape,
 * its type's schema version goes up by one, and an upcaster turns data of the old version into
 * the new shape whenever a stored event is read (the command handler's `loadState`, the projection
 * lanes, the audit's folding). New events are written with their type's current version
 * (`metadata.schemaVersion`). Upcasters live beside their events (`domain/<area>/<area>Upcasters.ts`);
 * `domain/areas.ts` folds them all.
 */

/** Turns one event type's data from `fromVersion` into the shape of `fromVersion + 1`. */
export type Upcaster = Readonly<{
  type: string;
  fromVersion: number;
  upcast(data: Readonly<Record<string, unknown>>): unknown;
}>;

/**
 * Stored event data taken as the shape its type and schema version name. The event store holds
 * only what this code's deciders wrote, typed by their event unions and stamped with their type's
 * schema version, and each upcaster turns one version into the next: so a stored event's type and
 * version say what its data is. This is the one place that claim is made (for the upcasters'
 * input and for `upcastEvent`); checking every field of every event would cost the projection
 * loop more than it could catch.
 */
const storedAs = <T>(data: unknown): T =>
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- the type and schema version of a stored event name its shape (see above)
  data as T;

/**
 * An upcaster typed by the event whose data it produces (the result must be that event's data)
 * and by the shape its type had at `fromVersion` (`Old`, by default any fields).
 */
export const upcaster = <E extends Event, Old extends object = Readonly<Record<string, unknown>>>(
  type: E['type'],
  fromVersion: number,
  upcast: (data: Old) => E['data'],
): Upcaster => ({ type, fromVersion, upcast: (data) => upcast(storedAs<Old>(data)) });

/** What an upcaster registry needs of a stored event. */
export type StoredShape = Readonly<{ type: string; data: unknown; schemaVersion: number | undefined }>;

export type Upcasters = Readonly<{
  /** The schema version new events of this type are written with (1 for a type never changed). */
  currentVersion(type: string): number;
  /** The event's data in its type's current shape (the same object when nothing applies). */
  upcast(event: StoredShape): unknown;
}>;

/** Thrown for an event written by newer code than this process runs (a later schema version). */
export class SchemaVersionTooNewError extends Error {
  constructor(
    readonly eventType: string,
    readonly schemaVersion: number,
    readonly currentVersion: number,
  ) {
    super(
      `${eventType} was written with schema version ${schemaVersion}; this code knows versions up to ${currentVersion}`,
    );
    this.name = 'SchemaVersionTooNewError';
  }
}

/**
 * A registry of upcasters. Each type's upcasters must chain from version 1 without gaps (1 → 2,
 * 2 → 3, ...), so the current version of a type is one more than its number of upcasters. Events
 * without a schema version count as version 1.
 */
export const upcasterRegistry = (upcasters: readonly Upcaster[]): Upcasters => {
  const byType = new Map<string, Upcaster[]>();
  for (const item of upcasters) {
    const chain = byType.get(item.type) ?? [];
    chain.push(item);
    byType.set(item.type, chain);
  }
  for (const [type, chain] of byType) {
    chain.sort((a, b) => a.fromVersion - b.fromVersion);
    chain.forEach((item, index) => {
      if (item.fromVersion !== index + 1)
        throw new Error(
          `Upcasters of ${type} must go from version 1 up without gaps; found one from version ${item.fromVersion}`,
        );
    });
  }
  const currentVersion = (type: string): number => (byType.get(type)?.length ?? 0) + 1;
  return {
    currentVersion,
    upcast({ type, data, schemaVersion }) {
      const version = schemaVersion ?? 1;
      const chain = byType.get(type);
      const current = (chain?.length ?? 0) + 1;
      if (version > current) throw new SchemaVersionTooNewError(type, version, current);
      if (!chain || version === current) return data;
      let shaped = data;
      for (const item of chain.slice(version - 1)) shaped = item.upcast(storedAs(shaped));
      return shaped;
    },
  };
};

/**
 * A stored event as an event of the union `E`, its data brought to the current shape of its type.
 * The caller knows the stream or the type belongs to `E` (a decider's own stream, whose `evolve`
 * ignores any other type; a projection's handled types); the data's shape is `storedAs`'s claim.
 */
export const upcastEvent = <E extends Event>(upcasters: Upcasters, stored: StoredShape): E =>
  storedAs<E>({ type: stored.type, data: upcasters.upcast(stored) });
