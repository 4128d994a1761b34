import { valueAt } from './conditions';
import { Unsupported, validation } from './errors';
import type { Path, PathElement, SetValue, UpdateAction } from './expressions';
import { addDecimals, negateDecimal, parseDecimal, plainText } from './numbers';
import type { AttributeValue, Item } from './values';

/*
 * An update expression applied to an item (its key alone when it does not exist yet). Every value
 * is worked out from the item as it was before the update, then the actions are applied in order.
 * A value written as given keeps its text ("1.50" stays "1.50", as DynamoDB Local keeps it); a sum
 * is written as Java's BigDecimal writes it.
 */

const MISSING_ATTRIBUTE = 'The provided expression refers to an attribute that does not exist in the item';
const WRONG_TYPE = 'An operand in the update expression has an incorrect data type';
const INVALID_PATH = 'The document path provided in the update expression is invalid for update';

const valueOf = (item: Item, value: SetValue): AttributeValue => {
  switch (value.kind) {
    case 'value':
      return value.value;
    case 'path': {
      const found = valueAt(item, value.path);
      if (found === undefined) throw validation(MISSING_ATTRIBUTE);
      return found;
    }
    case 'size':
      throw new Unsupported('size() in an update expression');
    case 'if_not_exists':
      return valueAt(item, value.path) ?? valueOf(item, value.fallback);
    case 'list_append': {
      const [first, second] = [valueOf(item, value.first), valueOf(item, value.second)];
      if (!('L' in first) || !('L' in second)) throw validation(WRONG_TYPE);
      return { L: [...first.L, ...second.L] };
    }
    case '+':
    case '-': {
      const [left, right] = [valueOf(item, value.left), valueOf(item, value.right)];
      if (!('N' in left) || !('N' in right)) throw validation(WRONG_TYPE);
      const addend = parseDecimal(right.N);
      return { N: plainText(addDecimals(parseDecimal(left.N), value.kind === '+' ? addend : negateDecimal(addend))) };
    }
  }
};

const sameElement = (a: PathElement, b: PathElement) => ('name' in a && 'name' in b ? a.name === b.name : 'index' in a && 'index' in b && a.index === b.index);

/** One path is the other, or leads into it. */
const overlap = (a: Path, b: Path) => a.slice(0, Math.min(a.length, b.length)).every((element, index) => sameElement(element, b[index] as PathElement));

const pathInMessage = (path: Path) => `[${path.map((element) => ('name' in element ? element.name : `[${element.index}]`)).join(', ')}]`;

/** `value` written at `path` below `container`, or the entry removed when `value` is undefined; a path through nothing is refused. */
const written = (container: AttributeValue | undefined, path: readonly PathElement[], value: AttributeValue | undefined): AttributeValue | undefined => {
  const [element, ...rest] = path as [PathElement, ...PathElement[]];
  if (container === undefined) {
    if (value === undefined) return undefined;
    throw validation(INVALID_PATH);
  }
  if ('name' in element) {
    if (!('M' in container)) throw validation(INVALID_PATH);
    const entries = { ...container.M };
    const next = rest.length === 0 ? value : written(Object.hasOwn(entries, element.name) ? entries[element.name] : undefined, rest, value);
    if (next === undefined) delete entries[element.name];
    else entries[element.name] = next;
    return { M: entries };
  }
  if (!('L' in container)) throw validation(INVALID_PATH);
  const elements = [...container.L];
  if (rest.length > 0) {
    const next = written(elements[element.index], rest, value);
    if (next !== undefined) elements[element.index] = next;
  } else if (value === undefined) {
    elements.splice(element.index, 1);
  } else {
    // Past the end of a list, SET appends.
    elements[Math.min(element.index, elements.length)] = value;
  }
  return { L: elements };
};

const writtenAt = (item: Record<string, AttributeValue>, path: Path, value: AttributeValue | undefined): void => {
  const [{ name }, ...rest] = path;
  const next = rest.length === 0 ? value : written(Object.hasOwn(item, name) ? item[name] : undefined, rest, value);
  if (next === undefined) delete item[name];
  else item[name] = next;
};

/** The item `actions` make of `item`; `keyNames` are the table's key attributes, which no action may touch. */
export const updated = (item: Item, actions: readonly UpdateAction[], keyNames: readonly string[]): Item => {
  actions.forEach((action, index) => {
    if (keyNames.includes(action.path[0].name)) {
      throw validation(`One or more parameter values were invalid: Cannot update attribute ${action.path[0].name}. This attribute is part of the key`);
    }
    const other = actions.slice(0, index).find((earlier) => overlap(earlier.path, action.path));
    if (other) {
      throw validation(
        `Invalid UpdateExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: ${pathInMessage(other.path)}, path two: ${pathInMessage(action.path)}`,
      );
    }
  });
  const values = actions.map((action) => (action.kind === 'SET' ? valueOf(item, action.value) : undefined));
  const result: Record<string, AttributeValue> = { ...item };
  actions.forEach((action, index) => {
    switch (action.kind) {
      case 'SET':
        return writtenAt(result, action.path, values[index]);
      case 'REMOVE':
        return writtenAt(result, action.path, undefined);
      case 'ADD': {
        if (action.path.length > 1 || !('N' in action.value)) throw new Unsupported('ADD of anything but a number to an attribute');
        const existing = valueAt(item, action.path);
        if (existing !== undefined && !('N' in existing)) throw validation(WRONG_TYPE);
        const sum = existing === undefined ? action.value : { N: plainText(addDecimals(parseDecimal(existing.N), parseDecimal(action.value.N))) };
        return writtenAt(result, action.path, sum);
      }
      case 'DELETE':
        throw new Unsupported('DELETE in an update expression: it removes elements of sets, which this store does not keep');
    }
  });
  return result;
};
