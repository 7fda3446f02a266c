import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * The layers as docs/architecture.md draws them, checked on every import of the source: the
 * domain stands alone; the stores and tools of infra/ know nothing of the domain; commands and
 * projections meet only through the domain's ports; daemons (workers/) act through commands and
 * read through projections, never through the HTTP layer; bin/ wires everything.
 */
const ROOT = resolve(import.meta.dirname, '..');
const LAYERS = ['domain', 'infra', 'commands', 'projections', 'workers', 'api', 'bin'] as const;
type Layer = (typeof LAYERS)[number];

const FORBIDDEN: Readonly<Record<Layer, readonly Layer[]>> = {
  domain: ['infra', 'commands', 'projections', 'workers', 'api', 'bin'],
  infra: ['domain', 'commands', 'projections', 'workers', 'api', 'bin'],
  commands: ['projections', 'workers', 'api', 'bin'],
  projections: ['commands', 'workers', 'api', 'bin'],
  workers: ['api', 'bin'],
  api: ['workers', 'bin'],
  bin: [],
};

const sourceFiles = (folder: string): string[] =>
  readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|mjs)$/.test(entry.name) ? [path] : [];
  });

/** The layer a relative import of `file` lands in, if it lands in one. */
const layerOf = (file: string, specifier: string): Layer | undefined => {
  if (!specifier.startsWith('.')) return undefined;
  const top = relative(ROOT, resolve(dirname(file), specifier)).split(sep)[0];
  return LAYERS.find((layer) => layer === top);
};

const importsOf = (file: string): string[] => {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((match) => match[1]!);
};

describe('Architecture: the direction of imports between layers', () => {
  for (const layer of LAYERS) {
    it(`${layer}/ imports none of ${FORBIDDEN[layer].length > 0 ? FORBIDDEN[layer].join(', ') : '(no rule)'}`, () => {
      const crossings = sourceFiles(join(ROOT, layer)).flatMap((file) =>
        importsOf(file)
          .filter((specifier) => FORBIDDEN[layer].includes(layerOf(file, specifier) as Layer))
          .map((specifier) => `${relative(ROOT, file)} imports ${specifier}`),
      );
      expect(crossings).to.deep.equal([]);
    });
  }

  it('sees the imports it checks (a file of every layer but domain imports another layer)', () => {
    for (const layer of LAYERS.filter((name) => name !== 'domain' && name !== 'infra')) {
      const crossesOut = (file: string) =>
        importsOf(file).some((specifier) => {
          const target = layerOf(file, specifier);
          return target !== undefined && target !== layer;
        });
      const reached = sourceFiles(join(ROOT, layer)).some(crossesOut);
      expect(reached, layer).to.equal(true);
    }
  });
});
