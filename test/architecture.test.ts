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

describe('Architecture: every daemon found from one place (docs/architecture.md, "Where each daemon is")', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const start = doc.indexOf('**Where each daemon is.**');
  const index = doc.slice(start, doc.indexOf('\n\n', doc.indexOf('| Daemon', start)));
  const rows = index.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| Daemon'));

  it('lists every role the workers run, each once', async () => {
    const { allRoles } = await import('../workers/roles.ts');
    const listed = rows.flatMap((row) => [...row.split('|')[1]!.matchAll(/`([a-z-]+)`/g)].map((match) => match[1]!));
    expect(listed.slice().sort()).to.deep.equal(allRoles.map((role) => role.name).sort());
  });

  it('names files that exist, each in the layer of its column', () => {
    const layers = ['domain', 'workers', 'commands'];
    const wrong = rows.flatMap((row) =>
      row
        .split('|')
        .slice(3, 6)
        .flatMap((cell, column) =>
          [...cell.matchAll(/`([\w/]+\.ts)`/g)]
            .map((match) => match[1]!)
            .filter((path) => !path.startsWith(`${layers[column]}/`) || !exists(path))
            .map((path) => `${path} (${layers[column]})`),
        ),
    );
    expect(rows.length).to.be.greaterThan(5);
    expect(wrong).to.deep.equal([]);
  });
});

const exists = (path: string): boolean => {
  try {
    readFileSync(join(ROOT, path));
    return true;
  } catch {
    return false;
  }
};
