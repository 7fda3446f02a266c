import { expect } from 'chai';
import { formatTable, terminalWidth, wrap } from '../../bin/commands/table.ts';

describe('Tables on the command line', () => {
  const rows = [
    ['role', 'trigger', 'waiting', 'last cycle'],
    [
      'undertaker',
      'every 30 s (max_dids 10000, chunk_size 10, dry_run false, purge_all_replicas false)',
      '0',
      'never ran',
    ],
    ['judge-evaluator', 'DidsAttached, DidsDetached', '12', '07:25:53Z (3 ms): did 4, skipped 0'],
  ];

  it('prints a table that fits as it is, columns two spaces apart', () => {
    expect(
      formatTable(
        [
          ['a', 'bb'],
          ['ccc', 'd'],
        ],
        { width: 100 },
      ),
    ).to.deep.equal(['a    bb', 'ccc  d']);
  });

  it('wraps the widest columns of text between words to fit the width, keeping every word', () => {
    const lines = formatTable(rows, { width: 60 });
    for (const line of lines) expect(line.length, line).to.be.at.most(60);
    expect(lines[0]).to.match(/^role {13}trigger +waiting {2}last cycle$/);
    expect(lines[1]).to.match(/^undertaker {7}every 30 s +0 +never ran$/);
    const words = (text: string) => text.split(/\s+/).filter(Boolean).sort();
    expect(words(lines.join(' '))).to.deep.equal(words(rows.flat().join(' ')));
    // The identifiers and numbers stay whole, each on the row's first line.
    expect(lines.filter((line) => /^\S/.test(line)).map((line) => line.split(/ {2,}/)[0])).to.deep.equal([
      'role',
      'undertaker',
      'judge-evaluator',
    ]);
  });

  it('prints every row on one line with wide, however wide', () => {
    const lines = formatTable(rows, { width: 60, wide: true });
    expect(lines).to.have.length(3);
    expect(lines[1]!.length).to.be.above(100);
  });

  it('breaks a word longer than its column, and takes the terminal width only from a terminal', () => {
    expect(wrap('abcdefghij klm', 4)).to.deep.equal(['abcd', 'efgh', 'ij', 'klm']);
    expect(terminalWidth({ isTTY: true, columns: 132 })).to.equal(132);
    expect(terminalWidth({ isTTY: false, columns: 132 })).to.equal(100);
    expect(terminalWidth({})).to.equal(100);
  });
});
