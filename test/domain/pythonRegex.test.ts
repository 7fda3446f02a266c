import { expect } from 'chai';
import { compilePythonPattern, pythonPatternProblem } from '../../domain/shared/pythonRegex.ts';

const matches = (pattern: string, text: string): boolean => compilePythonPattern(pattern)(text);

describe('Python regular expressions on RE2 (re.match, linear time)', () => {
  it('matches at the start of the text only, and to its end only when the expression says so', () => {
    expect(matches('mc16', 'mc16_13TeV')).to.equal(true);
    expect(matches('13TeV', 'mc16_13TeV')).to.equal(false);
    expect(matches('mc16$', 'mc16_13TeV')).to.equal(false);
    expect(matches('a|b', 'b')).to.equal(true);
  });

  it('keeps the start anchor under (?m) and reads leading inline flags', () => {
    expect(matches('(?m)^b', 'a\nb')).to.equal(false);
    expect(matches('(?i)AOD', 'aod')).to.equal(true);
    expect(matches('(?s)a.b', 'a\nb')).to.equal(true);
    expect(matches('(?x) a b  # a comment\n c', 'abc')).to.equal(true);
    expect(matches('(?x)[ ]', ' ')).to.equal(true);
  });

  it("reads Python's spellings: named groups, \\A, \\Z, \\u escapes and (?#...) comments", () => {
    expect(matches('(?P<project>mc16)_', 'mc16_x')).to.equal(true);
    expect(matches('\\Amc16\\Z', 'mc16')).to.equal(true);
    expect(matches('mc16\\Z', 'mc16x')).to.equal(false);
    expect(matches('\\u00e9t\\U0001F600', 'ét😀')).to.equal(true);
    expect(matches('a(?#not a group)b', 'ab')).to.equal(true);
    expect(matches('[]a]+\\\\Z', ']a\\Z')).to.equal(true);
  });

  it('answers catastrophic expressions of backtracking engines at once', () => {
    const long = `${'a'.repeat(100_000)}!`;
    for (const pattern of ['(a+)+$', '(a|aa)+$', '(a|a)*$', '(.*a){12}$', '(?:a*)*b', '(\\w+\\s?)*$'])
      expect(matches(pattern, long), pattern).to.equal(false);
  });

  it('refuses what needs backtracking, with the reason', () => {
    expect(pythonPatternProblem('(a)\\1')).to.match(/backreference \\1 needs backtracking/);
    expect(pythonPatternProblem('(?P<x>a)(?P=x)')).to.match(/backreference \(\?P=…\)/);
    expect(pythonPatternProblem('a(?=b)')).to.match(/lookaround \(\?=…\)/);
    expect(pythonPatternProblem('a(?!b)')).to.match(/lookaround \(\?!…\)/);
    expect(pythonPatternProblem('(?<=a)b')).to.match(/lookaround \(\?<=…\)/);
    expect(pythonPatternProblem('(?<!a)b')).to.match(/lookaround \(\?<!…\)/);
    expect(pythonPatternProblem('(a)?(?(1)b|c)')).to.match(/conditional/);
  });

  it("refuses what does not compile, too long expressions and RE2's repeat bounds", () => {
    expect(pythonPatternProblem('(')).to.be.a('string');
    expect(pythonPatternProblem('a\\')).to.match(/lone backslash/);
    expect(pythonPatternProblem('a'.repeat(1001))).to.match(/longer than 1000/);
    expect(pythonPatternProblem('(?:a{1000}){1000}')).to.match(/repeat/);
    expect(pythonPatternProblem('[\\1]')).to.be.a('string');
    expect(pythonPatternProblem('[a-z]+\\d{2,5}')).to.equal(undefined);
  });
});
