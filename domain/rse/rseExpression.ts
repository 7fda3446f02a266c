import { InvalidObject, InvalidRSEExpression } from '../shared/errors.ts';
import { availabilityInteger } from './availability.ts';
import { pythonFloat } from './pythonFloat.ts';
import {
  RSE_BOOLEAN_PROPERTIES,
  RSE_NUMBER_PROPERTIES,
  RSE_TEXT_PROPERTIES,
  type RseAttributeValue,
  type RseProperties,
} from './rse.ts';
import { isKeyOf, isOneOf } from '../shared/narrowing.ts';

/**
 * RSE expressions (Rucio's core/rse_expression_parser.py). Terms: `*` (every RSE), a bare word
 * (attribute `word` is true, or the boolean column `word` is true), `key=value` (a column of the
 * RSE record when `key` names one, otherwise an attribute), `key<n` / `key>n` (numeric compare of
 * an attribute). Operators `|` union, `&` intersection, `\` difference, all of equal precedence
 * and applied strictly left to right; parentheses group.
 */

/** What an expression is evaluated over: the non-deleted RSEs, as plain facts. */
export type RseFacts = Readonly<{
  id: string;
  rse: string;
  properties: Readonly<RseProperties>;
  attributes: Readonly<Record<string, RseAttributeValue>>;
}>;

export type RseExpressionOperator = '|' | '&' | '\\';

export type RseExpressionNode =
  | Readonly<{ kind: 'all' }>
  /** `key=value`, or a bare `key` meaning `key` is true. */
  | Readonly<{ kind: 'equals'; key: string; value: string | true }>
  | Readonly<{ kind: 'compare'; key: string; comparison: '<' | '>'; value: string }>
  | Readonly<{ kind: 'operation'; operator: RseExpressionOperator; left: RseExpressionNode; right: RseExpressionNode }>;

const KEY_VALUE = /[A-Za-z0-9._-]+[=<>][A-Za-z0-9_-]+/y;
const BARE_WORD = /[A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)*/y;
const OPERATORS: readonly RseExpressionOperator[] = ['|', '&', '\\'];

const syntaxError = () => new InvalidRSEExpression('Expression does not comply to RSE Expression syntax');

/**
 * Bounds Rucio has not: the longest expression (the rule schema's `rse_expression` limit) and the
 * deepest parentheses. Parsing and matching recurse, so an unbounded one would overflow the stack.
 */
export const RSE_EXPRESSION_MAX_LENGTH = 3000;
const MAX_PARENTHESES_DEPTH = 32;

/** Rucio checks the parentheses first: never more closed than opened, and as many of each. */
const checkParentheses = (expression: string): void => {
  if (expression.length > RSE_EXPRESSION_MAX_LENGTH) {
    throw new InvalidRSEExpression(`The expression is longer than ${RSE_EXPRESSION_MAX_LENGTH} characters.`);
  }
  let depth = 0;
  for (const char of expression) {
    if (char === '(') depth += 1;
    else if (char === ')') depth -= 1;
    if (depth < 0) throw new InvalidRSEExpression('Problem with parentheses.');
    if (depth > MAX_PARENTHESES_DEPTH)
      throw new InvalidRSEExpression(`Parentheses nest deeper than ${MAX_PARENTHESES_DEPTH} levels.`);
  }
  if (depth !== 0) throw new InvalidRSEExpression('Problem with parentheses.');
};

/** Parses an expression; bad syntax is an InvalidRSEExpression with Rucio's message. */
export const parseRseExpression = (expression: string): RseExpressionNode => {
  checkParentheses(expression);
  let position = 0;

  const primitive = (): RseExpressionNode => {
    for (const pattern of [KEY_VALUE, BARE_WORD]) {
      pattern.lastIndex = position;
      const match = pattern.exec(expression);
      if (!match) continue;
      position += match[0].length;
      return primitiveNode(match[0]);
    }
    if (expression[position] === '*') {
      position += 1;
      return { kind: 'all' };
    }
    throw syntaxError();
  };

  const term = (): RseExpressionNode => {
    if (expression[position] !== '(') return primitive();
    position += 1;
    const inner = sequence();
    if (expression[position] !== ')') throw syntaxError();
    position += 1;
    return inner;
  };

  const sequence = (): RseExpressionNode => {
    let left = term();
    let operator = expression[position];
    while (isOneOf(OPERATORS, operator)) {
      position += 1;
      left = { kind: 'operation', operator, left, right: term() };
      operator = expression[position];
    }
    return left;
  };

  const tree = sequence();
  if (position !== expression.length) throw syntaxError();
  return tree;
};

const primitiveNode = (text: string): RseExpressionNode => {
  const separator = /[=<>]/.exec(text);
  if (!separator) return { kind: 'equals', key: text, value: true };
  const key = text.slice(0, separator.index);
  const value = text.slice(separator.index + 1);
  const comparison = separator[0];
  if (comparison === '<' || comparison === '>') return { kind: 'compare', key, comparison, value };
  return { kind: 'equals', key, value };
};

/** The record's columns by type; `availability` is the legacy bitmask, id, rse and vo are text. */
const BOOLEAN_COLUMNS = new Set<string>(RSE_BOOLEAN_PROPERTIES);
const TEXT_COLUMNS = new Set<string>(['id', 'rse', 'vo', ...RSE_TEXT_PROPERTIES]);
const NUMBER_COLUMNS = new Set<string>([...RSE_NUMBER_PROPERTIES, 'availability']);

const columnValue = (rse: RseFacts, column: string): unknown => {
  switch (column) {
    case 'id':
      return rse.id;
    case 'rse':
      return rse.rse;
    case 'vo':
      return 'def';
    case 'availability':
      return availabilityInteger(rse.properties);
    default:
      return isKeyOf(rse.properties, column) ? rse.properties[column] : undefined;
  }
};

/** Rucio's RSE.from_str: a text value typed for its column, or InvalidObject. */
const typedColumnValue = (column: string, value: string): unknown => {
  if (BOOLEAN_COLUMNS.has(column)) {
    const lower = value.toLowerCase();
    if (value === '1' || lower === 'true') return true;
    if (value === '0' || lower === 'false') return false;
    throw new InvalidObject(`Invalid boolean value: ${value}`);
  }
  if (column === 'rse_type') {
    if (value !== 'DISK' && value !== 'TAPE') throw new InvalidObject(`Invalid rse_type: ${value}`);
    return value;
  }
  if (NUMBER_COLUMNS.has(column)) return pythonFloat(value) ?? value;
  return value;
};

/** Attribute values compare as Rucio stores them: booleans and `true`/`false` text alike. */
const storedText = (value: RseAttributeValue | true): string => {
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  const lower = value.toLowerCase();
  return lower === 'true' || lower === 'false' ? lower : value;
};

const isColumn = (key: string) =>
  BOOLEAN_COLUMNS.has(key) || TEXT_COLUMNS.has(key) || NUMBER_COLUMNS.has(key) || key === 'rse_type';

const equalsMatcher = (key: string, value: string | true): ((rse: RseFacts) => boolean) => {
  if (isColumn(key)) {
    // A bare column name only makes sense for the boolean columns; other columns never equal true.
    if (value === true) return BOOLEAN_COLUMNS.has(key) ? (rse) => columnValue(rse, key) === true : () => false;
    const wanted = typedColumnValue(key, value);
    return (rse) => columnValue(rse, key) === wanted;
  }
  const wanted = storedText(value);
  return (rse) => {
    const attribute = Object.hasOwn(rse.attributes, key) ? rse.attributes[key] : undefined;
    return attribute !== undefined && storedText(attribute) === wanted;
  };
};

const attributeNumber = (value: RseAttributeValue): number | undefined =>
  typeof value === 'boolean' ? Number(value) : pythonFloat(value);

const compareMatcher = (key: string, comparison: '<' | '>', value: string): ((rse: RseFacts) => boolean) => {
  const bound = pythonFloat(value);
  if (bound === undefined) return () => false;
  return (rse) => {
    const attribute = Object.hasOwn(rse.attributes, key) ? rse.attributes[key] : undefined;
    const number = attribute === undefined ? undefined : attributeNumber(attribute);
    if (number === undefined) return false;
    return comparison === '<' ? number < bound : number > bound;
  };
};

/** The ids of the RSEs a parsed expression selects. */
export const matchRseExpression = (node: RseExpressionNode, rses: readonly RseFacts[]): Set<string> => {
  switch (node.kind) {
    case 'all':
      return new Set(rses.map((rse) => rse.id));
    case 'equals': {
      const matches = equalsMatcher(node.key, node.value);
      return new Set(rses.filter(matches).map((rse) => rse.id));
    }
    case 'compare': {
      const matches = compareMatcher(node.key, node.comparison, node.value);
      return new Set(rses.filter(matches).map((rse) => rse.id));
    }
    case 'operation': {
      const left = matchRseExpression(node.left, rses);
      const right = matchRseExpression(node.right, rses);
      if (node.operator === '|') return new Set([...left, ...right]);
      if (node.operator === '&') return new Set([...left].filter((id) => right.has(id)));
      return new Set([...left].filter((id) => !right.has(id)));
    }
  }
};

/**
 * The RSEs an expression selects, in the order given. Bad syntax, or an expression that selects
 * nothing, is an InvalidRSEExpression.
 */
export const evaluateRseExpression = (expression: string, rses: readonly RseFacts[]): RseFacts[] => {
  const selected = matchRseExpression(parseRseExpression(expression), rses);
  if (selected.size === 0) throw new InvalidRSEExpression('RSE Expression resulted in an empty set.');
  return rses.filter((rse) => selected.has(rse.id));
};
