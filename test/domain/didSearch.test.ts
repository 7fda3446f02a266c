import { expect } from 'chai';
import { planDidSearch, typecast } from '../../domain/did/didSearch.ts';
import {
  DIDFilterSyntaxError,
  InvalidMetadata,
  KeyNotFound,
  UnsupportedOperation,
  ValueError,
  type RucioErrorClass,
} from '../../domain/shared/errors.ts';
import { parsePythonLiteral, PythonLiteralError } from '../../domain/shared/pythonLiteral.ts';
import { compileFilter } from '../../infra/readstore/documents.ts';
import { searchFilter } from '../../projections/did/didSearchQueries.ts';

const expectRefusal = (run: () => unknown, errorClass: RucioErrorClass, message?: RegExp) => {
  let failure: unknown;
  try {
    run();
  } catch (error) {
    failure = error;
  }
  expect(failure, 'should have been refused').to.be.instanceOf(errorClass);
  if (message) expect((failure as Error).message).to.match(message);
};

const documents = [
  {
    _id: 's:data_1',
    scope: 's',
    name: 'data_1',
    did_type: 'DATASET',
    length: 3,
    created_at: '2024-01-10T00:00:00.000Z',
    meta: null,
  },
  {
    _id: 's:dataX1',
    scope: 's',
    name: 'dataX1',
    did_type: 'DATASET',
    created_at: '2024-03-01T00:00:00.000Z',
    meta: null,
  },
  {
    _id: 's:cont',
    scope: 's',
    name: 'cont',
    did_type: 'CONTAINER',
    length: 1,
    project: 'p1',
    created_at: '2024-02-01T00:00:00.000Z',
    meta: { colour: 'red', size: 5 },
  },
  {
    _id: 's:file',
    scope: 's',
    name: 'file',
    did_type: 'FILE',
    bytes: 10,
    created_at: '2024-01-01T00:00:00.000Z',
    meta: { colour: 'blue' },
  },
  {
    _id: 't:data_1',
    scope: 't',
    name: 'data_1',
    did_type: 'DATASET',
    length: 9,
    created_at: '2024-01-10T00:00:00.000Z',
    meta: null,
  },
];

/** Names in scope `s` a search finds, through the MongoDB filter the read model runs. */
const found = (groups: Record<string, unknown>[], didType = 'collection'): string[] => {
  const matches = compileFilter(searchFilter(planDidSearch(groups, didType), 's'));
  return documents.filter((document) => matches(document)).map((document) => document.name);
};

describe('DID search semantics (behaviour rule 6)', () => {
  it('turns * and % into LIKE patterns where _ is literal', () => {
    expect(found([{ name: 'data_*' }])).to.deep.equal(['data_1']);
    expect(found([{ name: 'data%' }])).to.deep.equal(['data_1', 'dataX1']);
    expect(found([{ name: '*' }], 'all')).to.deep.equal(['data_1', 'dataX1', 'cont', 'file']);
    expect(found([{ 'name.ne': 'data*' }])).to.deep.equal(['cont']);
  });

  it('reads type collection as datasets and containers, and refuses unknown types', () => {
    expect(found([{}])).to.deep.equal(['data_1', 'dataX1', 'cont']);
    expect(found([{}], 'file')).to.deep.equal(['file']);
    expect(found([{ type: 'container' }], 'file')).to.deep.equal(['cont']);
    expectRefusal(() => planDidSearch([{}], 'everything'), UnsupportedOperation, /everything is not a valid type/);
  });

  it('compares lengths as integers, and ne also matches DIDs without the value', () => {
    expect(found([{ 'length.gt': 1 }])).to.deep.equal(['data_1']);
    expect(found([{ 'length.lte': '3' }])).to.deep.equal(['data_1', 'cont']);
    expect(found([{ 'length.ne': 3 }])).to.deep.equal(['dataX1', 'cont']);
    expect(found([{ 'project.ne': 'p1' }])).to.deep.equal(['data_1', 'dataX1']);
    expectRefusal(
      () => planDidSearch([{ length: 'many' }], 'collection'),
      ValueError,
      /Length has to be an integer value./,
    );
  });

  it('takes both creation bounds and ORs groups', () => {
    expect(found([{ created_after: '2024-01-05 00:00:00', created_before: '2024-02-15T00:00:00' }])).to.deep.equal([
      'data_1',
      'cont',
    ]);
    expect(found([{ name: 'cont' }, { 'length.gt': 2 }])).to.deep.equal(['data_1', 'cont']);
    expectRefusal(
      () => planDidSearch([{ created_after: 'yesterday' }], 'all'),
      DIDFilterSyntaxError,
      /Couldn't parse date 'yesterday'/,
    );
  });

  it('searches JSON metadata across types, only DIDs that have some', () => {
    expect(found([{ colour: 'red' }])).to.deep.equal(['cont']);
    expect(found([{ 'colour.ne': 'red' }])).to.deep.equal(['file']);
    expect(found([{ 'size.gte': 5 }])).to.deep.equal(['cont']);
  });

  it('refuses keys of two plugins, unknown columns and bad operators', () => {
    expectRefusal(
      () => planDidSearch([{ length: 1, colour: 'red' }], 'all'),
      InvalidMetadata,
      /do not all belong to the same metadata plugin/,
    );
    expectRefusal(() => planDidSearch([{ length: 1 }, { colour: 'red' }], 'all'), InvalidMetadata);
    expectRefusal(
      () => planDidSearch([{ lifetime: 5 }], 'all'),
      KeyNotFound,
      /'lifetime' keyword could not be coerced/,
    );
    expectRefusal(
      () => planDidSearch([{ 'length.about': 5 }], 'all'),
      DIDFilterSyntaxError,
      /Unknown operator 'about'/,
    );
    expectRefusal(() => planDidSearch([{ 'length.gt.x': 5 }], 'all'), DIDFilterSyntaxError);
    expectRefusal(
      () => planDidSearch([{ 'name.gt': 'a' }], 'all'),
      ValueError,
      /Name operator must be an equality operator/,
    );
    expectRefusal(
      () => planDidSearch([{ 'project.gt': 'a*' }], 'all'),
      DIDFilterSyntaxError,
      /Wildcards can only be used with equality operators/,
    );
  });

  it('types text values as Rucio does', () => {
    expect(typecast('True')).to.equal(true);
    expect(typecast('false')).to.equal(false);
    expect(typecast('42')).to.equal(42);
    expect(typecast('1.5')).to.equal(1.5);
    expect(typecast('None')).to.equal(null);
    expect(typecast("'quoted'")).to.equal('quoted');
    expect(typecast('run-5')).to.equal('run-5');
    expect(typecast('plain')).to.equal('plain');
    expect((typecast('Tue, 02 Dec 2025 11:25:36 UTC') as Date).toISOString()).to.equal('2025-12-02T11:25:36.000Z');
    expect((typecast('2025-12-02T11:25:36.250000Z') as Date).toISOString()).to.equal('2025-12-02T11:25:36.250Z');
  });
});

describe('Python literal reader', () => {
  it('reads what the Python client sends for filters', () => {
    expect(parsePythonLiteral("[{'name': 'f*', 'length.gt': 0}, {'type': \"dataset\", 'x': -1.5e2}]")).to.deep.equal([
      { name: 'f*', 'length.gt': 0 },
      { type: 'dataset', x: -150 },
    ]);
    expect(
      parsePythonLiteral("{'ok': True, 'none': None, 'no': False, 'tuple': (1, 2,), 'esc': 'it\\'s\\n'}"),
    ).to.deep.equal({
      ok: true,
      none: null,
      no: false,
      tuple: [1, 2],
      esc: "it's\n",
    });
    expect(parsePythonLiteral("'a' 'b'")).to.equal('ab');
  });

  it('refuses anything that is not a literal', () => {
    for (const text of ["__import__('os')", "[{'a': 1}", "{'a' 1}", 'x', '1 + 2', "'open", '']) {
      expect(() => parsePythonLiteral(text), text).to.throw(PythonLiteralError);
    }
  });
});
