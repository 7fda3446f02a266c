import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * Tests wait for conditions (test/support/eventually.ts, test/support/roleCycles.ts) or move the
 * server's clock (test/support/clock.ts); they never sleep a fixed time, which is too short on a
 * busy machine and too long on an idle one. This reads every TypeScript file under test/ and
 * refuses a fixed wait longer than 100 ms: a `setTimeout` whose delay holds such a number, the
 * promise `setTimeout(ms)`, and calls of `sleep`, `pause`, `delay`, `wait` or `waitForTimeout` with
 * such a number. Not waits, and allowed: a pause inside a loop (the interval of a poll for a
 * condition), a timer kept to be cleared or whose callback rejects (a deadline, an escalation to
 * SIGKILL), and anything of 100 ms or less.
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

/** Whether the call is inside a loop: the pause between two looks at a condition. */
const inLoop = (node: ts.Node): boolean => {
  for (let parent = node.parent; parent; parent = parent.parent)
    if (
      ts.isForStatement(parent) ||
      ts.isForOfStatement(parent) ||
      ts.isForInStatement(parent) ||
      ts.isWhileStatement(parent) ||
      ts.isDoStatement(parent)
    )
      return true;
  return false;
};

/** Whether the timer is kept (`const timer = setTimeout(...)`), to be cleared once what it bounds is done. */
const kept = (call: ts.CallExpression): boolean =>
  ts.isVariableDeclaration(call.parent) ||
  (ts.isBinaryExpression(call.parent) && call.parent.operatorToken.kind === ts.SyntaxKind.EqualsToken);

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
    if (ts.isCallExpression(node) && !inLoop(node)) {
      const name = calleeName(node);
      const [first, second] = node.arguments;
      if (name === 'setTimeout') {
        // setTimeout(callback, ms), or the promise form of node:timers/promises, setTimeout(ms).
        const delay = second ?? first;
        const callback = second ? first : undefined;
        const deadline = kept(node) || (callback !== undefined && rejects(callback));
        if (delay && largestNumber(delay) > LIMIT_MS && !deadline) report(node);
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

  it('sees the sleeps it refuses, and lets deadlines, polls and short pauses be', () => {
    const text = [
      'await new Promise((resolve) => setTimeout(resolve, 1100));',
      'const cycles = (count = 3) => new Promise((resolve) => setTimeout(resolve, count * 1_100));',
      'await sleep(500);',
      'await page.waitForTimeout(250);',
      'await setTimeout(3000); // node:timers/promises',
      'setTimeout(() => req.end(rest), 300);',
      "setTimeout(() => reject(new Error('too late')), 20_000);",
      "const timer = setTimeout(() => signal('SIGKILL'), 15_000);",
      'while (!(await ready())) await new Promise((resolve) => setTimeout(resolve, 200));',
      'await new Promise((resolve) => setTimeout(resolve, 50));',
      'await pause(10);',
    ].join('\n');
    expect(fixedSleeps('sample.ts', text).map((found) => Number(found.split(':')[0]))).to.deep.equal([
      1, 2, 3, 4, 5, 6,
    ]);
  });
});
