import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ALL_EVENT_TYPES, EVENT_TYPES_BY_AREA } from '../../domain/events.ts';

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

describe('The list of every event (domain/events.ts)', () => {
  describe('given the event-type records the areas declare', () => {
    const records = declaredRecords().filter(({ file }) => !file.endsWith(join('domain', 'events.ts')));

    it('finds the records to check', () => expect(records.length).to.be.greaterThan(10));

    it('lists every one of them', async () => {
      const listed = new Set(Object.values(EVENT_TYPES_BY_AREA).map((types) => Object.keys(types).sort().join()));
      const missing: string[] = [];
      for (const { file, name } of records) {
        const module: Record<string, object> = await import(pathToFileURL(file).href);
        if (!listed.has(Object.keys(module[name]!).sort().join())) missing.push(`${name} (${relative(DOMAIN, file)})`);
      }
      expect(missing, 'records missing from EVENT_TYPES_BY_AREA').to.deep.equal([]);
    });
  });

  describe('given every area', () => {
    it('names each event type in one area only', () => {
      const owners = new Map<string, string[]>();
      for (const [area, types] of Object.entries(EVENT_TYPES_BY_AREA))
        for (const type of Object.keys(types)) owners.set(type, [...(owners.get(type) ?? []), area]);
      expect([...owners].filter(([, areas]) => areas.length > 1)).to.deep.equal([]);
    });

    it('gathers every type of every area in ALL_EVENT_TYPES', () =>
      expect(Object.keys(ALL_EVENT_TYPES).sort()).to.deep.equal(
        Object.values(EVENT_TYPES_BY_AREA)
          .flatMap((types) => Object.keys(types))
          .sort(),
      ));
  });
});
