/**
 * README.md's code blocks as a test runs them (test/readme/readme.test.ts): extracted, rewritten
 * for the test's server, run, and their commented outputs checked.
 *
 * What counts as a commented output:
 * - in a ```sh block, a comment line whose text starts with `{` or `[` (a JSON answer, up to its
 *   closing bracket; what follows is prose), or with `→ ` (any other output, the rest of the line);
 *   it is checked against what the commands since the previous such comment printed;
 * - in a ```python block, the comment at the end of a line that prints (`print(...)  # {...}`),
 *   checked in order against what the block prints.
 * In a pattern `...` stands for any text (the spaces around it too), and a run of 8 or more hexadecimal digits for any such
 * run (ids differ from run to run). Every other comment is prose.
 */
export type Block = Readonly<{ language: string; section: string; line: number; code: string }>;

/** The fenced code blocks of a Markdown text, each with the `##` section it is in. */
export const codeBlocks = (markdown: string): Block[] => {
  const blocks: Block[] = [];
  let section = '';
  let open: { language: string; line: number; lines: string[] } | undefined;
  for (const [index, line] of markdown.split('\n').entries()) {
    if (open) {
      if (line.startsWith('```')) {
        blocks.push({ language: open.language, section, line: open.line, code: open.lines.join('\n') });
        open = undefined;
      } else open.lines.push(line);
    } else if (line.startsWith('```')) open = { language: line.slice(3).trim(), line: index + 2, lines: [] };
    else if (line.startsWith('## ')) section = line.slice(3).trim();
  }
  return blocks;
};

export type Expectation = Readonly<{ text: string; pattern: RegExp; line: number }>;

/** A commented output as a regular expression: `...` any text, long hex runs any hex run. */
export const outputPattern = (text: string): RegExp => {
  const source = text
    .trim()
    .split(/\s*\.\.\.\s*/)
    .map((part) =>
      part
        .split(/([0-9a-f]{8,})/)
        .map((piece, index) =>
          index % 2 === 1 ? '[0-9a-f]+' : piece.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\s+/g, '\\s+'),
        )
        .join(''),
    )
    .join('[\\s\\S]*?');
  return new RegExp(source);
};

/** The JSON at the start of `text` up to its closing bracket (strings respected), or undefined. */
const leadingJson = (text: string): string | undefined => {
  let depth = 0;
  let quoted: string | undefined;
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index]!;
    if (quoted) {
      if (character === '\\') index += 1;
      else if (character === quoted) quoted = undefined;
    } else if (character === '"' || character === "'") quoted = character;
    else if (character === '{' || character === '[') depth += 1;
    else if (character === '}' || character === ']') {
      depth -= 1;
      if (depth === 0) return text.slice(0, index + 1);
    }
  }
  return undefined;
};

/** The commented output of a shell comment line, or undefined when it is prose. */
export const shellExpectation = (line: string): string | undefined => {
  const comment = /^\s*# (.*)$/.exec(line)?.[1];
  if (comment === undefined) return undefined;
  if (comment.startsWith('→ ')) return comment.slice(2).trim();
  if (comment.startsWith('{') || comment.startsWith('[')) return leadingJson(comment) ?? comment;
  return undefined;
};

const MARKER = '@@readme-check@@';

export type ShellScript = Readonly<{
  script: string;
  /** The expectations checked against the output before marker i. */
  checks: readonly (readonly Expectation[])[];
}>;

/**
 * One bash script running the blocks one after the other, as if pasted into one shell, with each
 * commented output replaced by a marker printed there. `set -e`: a command that fails stops the
 * run (the README's failing examples use plain `curl -s`, which succeeds on an error answer).
 */
export const shellScript = (blocks: readonly Block[], rewrite: (code: string) => string): ShellScript => {
  const lines = ['set -e', 'exec 2>&1'];
  const checks: Expectation[][] = [];
  for (const block of blocks) {
    for (const [index, line] of rewrite(block.code).split('\n').entries()) {
      const expected = shellExpectation(line);
      if (expected === undefined) {
        lines.push(line);
        continue;
      }
      // Consecutive comments check the same output.
      if (lines.at(-1) !== `printf '\\n%s\\n' '${MARKER}'`) {
        lines.push(`printf '\\n%s\\n' '${MARKER}'`);
        checks.push([]);
      }
      checks.at(-1)!.push({ text: expected, pattern: outputPattern(expected), line: block.line + index });
    }
  }
  return { script: `${lines.join('\n')}\n`, checks };
};

/** The checks that fail on a run's output: each expectation against its stretch of output. */
export const failedChecks = (output: string, script: ShellScript): string[] => {
  const stretches = output.split(`\n${MARKER}\n`);
  const failures: string[] = [];
  for (const [index, expectations] of script.checks.entries()) {
    const stretch = stretches[index];
    for (const expectation of expectations) {
      if (stretch === undefined) failures.push(`README.md:${expectation.line}: not reached: ${expectation.text}`);
      else if (!expectation.pattern.test(stretch))
        failures.push(
          `README.md:${expectation.line}: expected ${expectation.text}\n  the commands before it printed:\n${indent(stretch)}`,
        );
    }
  }
  return failures;
};

/** The commented outputs of a Python block: comments ending lines that print. */
export const pythonExpectations = (block: Block): Expectation[] =>
  block.code.split('\n').flatMap((line, index) => {
    const match = /^(?!\s*#).*\bprint\(.*\)\s+# (.+)$/.exec(line);
    return match ? [{ text: match[1]!, pattern: outputPattern(match[1]!), line: block.line + index }] : [];
  });

/** The Python expectations that fail, each searched for after the previous one's match. */
export const failedInOrder = (output: string, expectations: readonly Expectation[]): string[] => {
  let rest = output;
  const failures: string[] = [];
  for (const expectation of expectations) {
    const match = expectation.pattern.exec(rest);
    if (!match) failures.push(`README.md:${expectation.line}: expected ${expectation.text}`);
    else rest = rest.slice(match.index + match[0].length);
  }
  return failures.length > 0 ? [...failures, `  the block printed:\n${indent(output)}`] : [];
};

const indent = (text: string): string =>
  text
    .trimEnd()
    .split('\n')
    .map((line) => `    | ${line}`)
    .join('\n');
