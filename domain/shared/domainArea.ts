import type { Setting } from '../config/settingKinds.ts';
import type { Event, EventTypes } from './event.ts';
import type { Upcaster } from './upcasting.ts';

/** An area's `/config` options, by the name code reads them with (`SETTINGS.undertakerInterval`). */
export type SettingDeclarations = Readonly<Record<string, Setting<unknown>>>;

/**
 * What the audit needs of an area: which of its streams are subjects of their own (their events
 * are read from the stream), and which other subjects each event concerns, so that those
 * subjects' histories show it (domain/shared/auditSubjects.ts names the subjects).
 */
export type AreaAudit<E extends Event> = Readonly<{
  /** The category of the area's streams that are subjects (`did` for `did-<scope>:<name>`); default none. */
  subjectStreams?: string;
  /** The DIDs, rules, RSEs and subscriptions an event concerns besides its own stream; default none. */
  subjectsOf?(event: E): Iterable<string>;
}>;

/**
 * One area of the domain as the rest of the service must know it, declared once, in the area's own
 * folder (`domain/<area>/<area>Area.ts`): its events (a record checked against the union of every
 * event it records), the upcasters of their older shapes, the `/config` options it reads, and what
 * each event concerns in the audit. Errors and permissions need no registry: they are classes and
 * functions in the area's folder, imported where used. `domain/areas.ts` lists the areas; the
 * registries the service reads (every event, every upcaster, every setting, the audit's subjects)
 * are folded from that list.
 */
export type DomainArea<E extends Event, S extends SettingDeclarations> = Readonly<{
  /** The area's folder under domain/. */
  name: string;
  events: EventTypes<E>;
  upcasters: readonly Upcaster[];
  settings: S;
  audit: AreaAudit<E>;
}>;

/** Declares an area; the event union and the settings' names are taken from what it is given. */
export const domainArea = <E extends Event, S extends SettingDeclarations>(area: DomainArea<E, S>): DomainArea<E, S> =>
  area;

/** The parts of an area that every reader takes whatever its union: what tests and status pages walk. */
export type AreaSummary = Readonly<{
  name: string;
  eventTypes: readonly string[];
  settings: readonly Setting<unknown>[];
}>;

type SubjectsFinder = (event: Event) => Iterable<string>;

/**
 * Areas folded one by one into the registries the service reads: `with(area)` adds an area and
 * returns the registries with it, typed by the union of every event so far and by every setting's
 * name, so that nothing is cast and a name given twice is refused when the module loads.
 */
export class DomainAreas<E extends Event, S extends SettingDeclarations> {
  private constructor(
    /** Every area, in the order listed. */
    readonly areas: readonly AreaSummary[],
    /** Every event type of every area, each once. */
    readonly events: EventTypes<E>,
    /** Every upcaster of every area. */
    readonly upcasters: readonly Upcaster[],
    /** Every declared `/config` option, by the name code reads it with. */
    readonly settings: S,
    private readonly subjectFinders: ReadonlyMap<string, SubjectsFinder>,
    private readonly subjectStreams: ReadonlySet<string>,
  ) {}

  /** No area yet: the start of the fold. */
  static readonly none = new DomainAreas<never, Readonly<Record<never, never>>>([], {}, [], {}, new Map(), new Set());

  with<E2 extends Event, S2 extends SettingDeclarations>(area: DomainArea<E2, S2>): DomainAreas<E | E2, S & S2> {
    const taken = (what: string, names: readonly string[], known: object) =>
      names.filter((name) => Object.hasOwn(known, name)).map((name) => `${what} ${name}`);
    const repeated = [
      ...(this.areas.some((known) => known.name === area.name) ? [`area ${area.name}`] : []),
      ...taken('event type', Object.keys(area.events), this.events),
      ...taken('setting', Object.keys(area.settings), this.settings),
    ];
    if (repeated.length > 0) throw new Error(`The area ${area.name} declares again: ${repeated.join(', ')}`);
    const owns = (event: Event): event is E2 => Object.hasOwn(area.events, event.type);
    const { subjectsOf } = area.audit;
    const finders = new Map(this.subjectFinders);
    if (subjectsOf) {
      const finder: SubjectsFinder = (event) => (owns(event) ? subjectsOf(event) : []);
      for (const type of Object.keys(area.events)) finders.set(type, finder);
    }
    const streams = new Set(this.subjectStreams);
    if (area.audit.subjectStreams) streams.add(area.audit.subjectStreams);
    return new DomainAreas<E | E2, S & S2>(
      [
        ...this.areas,
        { name: area.name, eventTypes: Object.keys(area.events), settings: Object.values(area.settings) },
      ],
      { ...this.events, ...area.events },
      [...this.upcasters, ...area.upcasters],
      { ...this.settings, ...area.settings },
      finders,
      streams,
    );
  }

  /** The subjects an event concerns besides its own stream, as its area declares them. */
  auditSubjects(event: E): ReadonlySet<string> {
    return new Set(this.subjectFinders.get(event.type)?.(event) ?? []);
  }

  /**
   * The subject whose own stream this is (`did-<scope>:<name>` is `did:<scope>:<name>`), if its
   * area declares its streams subjects: a subject's own events are read from its stream, so the
   * audit index holds only the events of other streams that concern it.
   */
  streamSubject(streamName: string): string | undefined {
    const separator = streamName.indexOf('-');
    const category = streamName.slice(0, separator);
    return separator > 0 && this.subjectStreams.has(category)
      ? `${category}:${streamName.slice(separator + 1)}`
      : undefined;
  }
}
