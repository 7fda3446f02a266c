import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ALL_EVENT_TYPES, DOMAIN_AREAS } from '../../domain/areas.ts';

const DOMAIN = join(import.meta.dirname, '..', '..', 'domain');

/** Every `export const X = eventTypes<...>(` of domain/, with the file that declares it. */
const declaredRecords = (): { file: string; name: string }[] =>
  readdirSync(DOMAIN, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .flatMap((file) =>
      [...readFileSync(join(DOMAIN, file), 'utf8').matchAll(/export const (\w+) = eventTypes</g)].map((match) => ({
        file: join(DOMAIN, file),
        name: match[1]!,
      })),
    );

/** Every `export const x = domainArea(` of domain/: what an area declares of itself. */
const declaredAreas = (): string[] =>
  readdirSync(DOMAIN, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .flatMap((file) =>
      [...readFileSync(join(DOMAIN, file), 'utf8').matchAll(/export const (\w+) = domainArea\(/g)].map(
        (match) => match[1]!,
      ),
    );

describe('The list of every event (domain/areas.ts)', () => {
  describe('given the event-type records the areas declare', () => {
    const records = declaredRecords();

    it('finds the records to check', () => expect(records.length).to.be.greaterThan(10));

    it('gathers every one of them in an area', async () => {
      const missing: string[] = [];
      for (const { file, name } of records) {
        const module: Record<string, object> = await import(pathToFileURL(file).href);
        const types = Object.keys(module[name]!);
        if (!types.every((type) => Object.hasOwn(ALL_EVENT_TYPES, type)))
          missing.push(`${name} (${relative(DOMAIN, file)})`);
      }
      expect(missing, 'records no area declares').to.deep.equal([]);
    });
  });

  describe('given every area', () => {
    it('lists every area declared in domain/', () =>
      expect(DOMAIN_AREAS.areas.map((area) => area.name)).to.have.length(declaredAreas().length));

    it('names each event type in one area only', () => {
      const owners = new Map<string, string[]>();
      for (const area of DOMAIN_AREAS.areas)
        for (const type of area.eventTypes) owners.set(type, [...(owners.get(type) ?? []), area.name]);
      expect([...owners].filter(([, areas]) => areas.length > 1)).to.deep.equal([]);
    });

    it('gathers every type of every area in ALL_EVENT_TYPES', () =>
      expect(Object.keys(ALL_EVENT_TYPES).sort()).to.deep.equal(
        DOMAIN_AREAS.areas.flatMap((area) => area.eventTypes).sort(),
      ));

    it('refuses an area that declares an event type again', () =>
      expect(() =>
        DOMAIN_AREAS.with({
          name: 'again',
          events: { AccountCreated: true },
          upcasters: [],
          settings: {},
          audit: {},
        }),
      ).to.throw('event type AccountCreated'));
  });
});
