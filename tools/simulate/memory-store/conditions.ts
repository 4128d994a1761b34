import type { Condition, Operand, Path } from './expressions';
import { type AttributeValue, type Item, compareValues, valuesEqual } from './values';

/*
 * A condition expression evaluated on an item (an empty one when the item does not exist), as
 * DynamoDB evaluates it: a comparison with an attribute that is missing, or between values of two
 * types, is false, except `<>`, which is true.
 */

/** An own entry only: an attribute named like one of Object's (`constructor`) must not find Object's. */
export const entryOf = <Value>(record: Readonly<Record<string, Value>>, name: string): Value | undefined =>
  Object.hasOwn(record, name) ? record[name] : undefined;

export const valueAt = (item: Item, path: Path): AttributeValue | undefined => {
  let value = entryOf(item, path[0].name);
  for (const element of path.slice(1)) {
    if (value === undefined) return undefined;
    if ('name' in element) value = 'M' in value ? entryOf(value.M, element.name) : undefined;
    else value = 'L' in value ? value.L[element.index] : undefined;
  }
  return value;
};

/** size(): a string's characters, a map's entries, a list's elements; other types have none. */
const sizeOf = (value: AttributeValue | undefined): AttributeValue | undefined => {
  if (value === undefined) return undefined;
  if ('S' in value) return { N: String(value.S.length) };
  if ('M' in value) return { N: String(Object.keys(value.M).length) };
  if ('L' in value) return { N: String(value.L.length) };
  return undefined;
};

const operandValue = (item: Item, operand: Operand): AttributeValue | undefined => {
  if (operand.kind === 'value') return operand.value;
  if (operand.kind === 'size') return sizeOf(valueAt(item, operand.path));
  return valueAt(item, operand.path);
};

const ordered = (a: AttributeValue | undefined, b: AttributeValue | undefined, holds: (order: number) => boolean): boolean => {
  const order = a === undefined || b === undefined ? undefined : compareValues(a, b);
  return order !== undefined && holds(order);
};

const contains = (haystack: AttributeValue | undefined, needle: AttributeValue | undefined): boolean => {
  if (haystack === undefined || needle === undefined) return false;
  if ('S' in haystack) return 'S' in needle && haystack.S.includes(needle.S);
  if ('L' in haystack) return haystack.L.some((element) => valuesEqual(element, needle));
  return false;
};

export const holds = (condition: Condition, item: Item): boolean => {
  switch (condition.kind) {
    case 'and':
      return holds(condition.left, item) && holds(condition.right, item);
    case 'or':
      return holds(condition.left, item) || holds(condition.right, item);
    case 'not':
      return !holds(condition.condition, item);
    case 'attribute_exists':
      return valueAt(item, condition.path) !== undefined;
    case 'attribute_not_exists':
      return valueAt(item, condition.path) === undefined;
    case 'begins_with': {
      const [value, prefix] = [operandValue(item, condition.operand), operandValue(item, condition.argument)];
      return value !== undefined && prefix !== undefined && 'S' in value && 'S' in prefix && value.S.startsWith(prefix.S);
    }
    case 'contains':
      return contains(operandValue(item, condition.operand), operandValue(item, condition.argument));
    case 'between': {
      const value = operandValue(item, condition.operand);
      return (
        ordered(value, operandValue(item, condition.low), (order) => order >= 0) && ordered(value, operandValue(item, condition.high), (order) => order <= 0)
      );
    }
    case 'in': {
      const value = operandValue(item, condition.operand);
      return value !== undefined && condition.list.some((member) => {
        const candidate = operandValue(item, member);
        return candidate !== undefined && valuesEqual(value, candidate);
      });
    }
    case 'compare': {
      const [left, right] = [operandValue(item, condition.left), operandValue(item, condition.right)];
      switch (condition.comparator) {
        case '=':
          return left !== undefined && right !== undefined && valuesEqual(left, right);
        case '<>':
          return left === undefined || right === undefined || !valuesEqual(left, right);
        case '<':
          return ordered(left, right, (order) => order < 0);
        case '<=':
          return ordered(left, right, (order) => order <= 0);
        case '>':
          return ordered(left, right, (order) => order > 0);
        case '>=':
          return ordered(left, right, (order) => order >= 0);
      }
    }
  }
};
