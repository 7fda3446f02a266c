import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * Tests wait for conditions (test/support/eventually.ts, test/support/roleCycles.ts) or move the
 * server's clock (test/support/clock.ts); they never sleep a fixed time, which is too short on a
 * busy machine and too long on an idle one. This reads every TypeScript file under test/ and
 * refuses a fixed wait longer than 100 ms: a `setTimeout` whose delay holds such a number (unless
 * its callback rejects: that is a deadline, not a wait), the promise `setTimeout(ms)`, and calls
 * of `sleep`, `pause`, `delay`, `wait` or `waitForTimeout` with such a number. Shorter pauses
 * (a poll's interval, a jitter) are allowed.
 */
const ROOT = resolve(import.meta.dirname, '..');
const LIMIT_MS = 100;
const SLEEPERS = new Set(['sleep', 'pause', 'delay', 'wait', 'waitForTimeout']);

const testFiles = (folder: string): string[] =>
  readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(path);
    return /\.(ts|mts)$/.test(entry.name) ? [path] : [];
  });

/** The largest number written in an expression (`count * 1_100` holds 1100), or 0. */
const largestNumber = (node: ts.Node): number => {
  let largest = 0;
  const visit = (child: ts.Node) => {
    if (ts.isNumericLiteral(child)) largest = Math.max(largest, Number(child.text.replaceAll('_', '')));
    ts.forEachChild(child, visit);
  };
  visit(node);
  return largest;
};

/** Whether a callback calls `reject`: a timer that fails a wait once its deadline passes. */
const rejects = (callback: ts.Node): boolean => {
  let found = false;
  const visit = (child: ts.Node) => {
    if (ts.isCallExpression(child) && ts.isIdentifier(child.expression) && child.expression.text === 'reject')
      found = true;
    ts.forEachChild(child, visit);
  };
  visit(callback);
  return found;
};

const calleeName = (call: ts.CallExpression): string | undefined => {
  const callee = call.expression;
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
  return undefined;
};

/** The fixed waits over the limit in one file's text, as `line: code`. */
export const fixedSleeps = (fileName: string, text: string): string[] => {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const report = (node: ts.Node) => {
    const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
    found.push(`${line + 1}: ${node.getText(source).replace(/\s+/g, ' ')}`);
  };
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node)) {
      const name = calleeName(node);
      const [first, second] = node.arguments;
      if (name === 'setTimeout') {
        // setTimeout(callback, ms), or the promise form of node:timers/promises, setTimeout(ms).
        const delay = second ?? first;
        const callback = second ? first : undefined;
        if (delay && largestNumber(delay) > LIMIT_MS && !(callback && rejects(callback))) report(node);
      } else if (name && SLEEPERS.has(name) && node.arguments.some((argument) => largestNumber(argument) > LIMIT_MS))
        report(node);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
};

describe('Tests wait for conditions, never for a fixed time over 100 ms', () => {
  it('finds no fixed sleep over 100 ms in any file under test/', () => {
    const sleeps = testFiles(join(ROOT, 'test')).flatMap((file) =>
      fixedSleeps(file, readFileSync(file, 'utf8')).map((found) => `${relative(ROOT, file)}:${found}`),
    );
    expect(sleeps).to.deep.equal([]);
  });

  it('sees the sleeps it refuses, and lets deadlines and short polls be', () => {
    const text = [
      'await new Promise((resolve) => setTimeout(resolve, 1100));',
      'const cycles = (count = 3) => new Promise((resolve) => setTimeout(resolve, count * 1_100));',
      'await sleep(500);',
      'await page.waitForTimeout(250);',
      'await setTimeout(3000); // node:timers/promises',
      'setTimeout(() => req.end(rest), 300);',
      "setTimeout(() => reject(new Error('too late')), 20_000);",
      'await new Promise((resolve) => setTimeout(resolve, 50));',
      'await pause(10);',
    ].join('\n');
    expect(fixedSleeps('sample.ts', text).map((found) => Number(found.split(':')[0]))).to.deep.equal([
      1, 2, 3, 4, 5, 6,
    ]);
  });
});
