import { Unsupported, validation } from './errors';
import { javaHashSetOrder, javaStringHash } from './java-hash-order';
import { type AttributeValue, checkedValue } from './values';

/** Which expression a refusal names, as DynamoDB's messages do. */
export type ExpressionKind = 'ConditionExpression' | 'UpdateExpression' | 'KeyConditionExpression';

/**
 * A request's ExpressionAttributeNames and ExpressionAttributeValues, shared by all its expressions,
 * with those the expressions used: DynamoDB refuses a request that defines one it does not use,
 * as it refuses an expression that uses one not defined.
 */
export class Placeholders {
  private readonly namesUsed = new Set<string>();
  private readonly valuesUsed = new Set<string>();

  constructor(
    private readonly names: Readonly<Record<string, string>> | undefined,
    private readonly values: Readonly<Record<string, unknown>> | undefined,
  ) {
    if (values && Object.keys(values).length === 0) throw validation('ExpressionAttributeValues must not be empty');
    if (names && Object.keys(names).length === 0) throw validation('ExpressionAttributeNames must not be empty');
  }

  name(token: string, kind: ExpressionKind): string {
    const name = this.names?.[token];
    if (name === undefined) throw validation(`Invalid ${kind}: An expression attribute name used in the document path is not defined; attribute name: ${token}`);
    this.namesUsed.add(token);
    return name;
  }

  value(token: string, kind: ExpressionKind): AttributeValue {
    const value = this.values?.[token];
    if (value === undefined) throw validation(`Invalid ${kind}: An expression attribute value used in expression is not defined; attribute value: ${token}`);
    this.valuesUsed.add(token);
    return checkedValue(value);
  }

  /** Once every expression of the request is read. */
  checkAllUsed(): void {
    const unused = (defined: object | undefined, used: ReadonlySet<string>) => Object.keys(defined ?? {}).filter((token) => !used.has(token));
    const [names, values] = [unused(this.names, this.namesUsed), unused(this.values, this.valuesUsed)];
    if (values.length > 0) throw validation(`Value provided in ExpressionAttributeValues unused in expressions: keys: {${inJavaSetOrder(values)}}`);
    if (names.length > 0) throw validation(`Value provided in ExpressionAttributeNames unused in expressions: keys: {${inJavaSetOrder(names)}}`);
  }
}

/** DynamoDB Local lists the tokens from a Java HashSet; the order of one of default size is the closest guess at it. */
const DEFAULT_SET_CAPACITY = 16;
const inJavaSetOrder = (tokens: readonly string[]): string =>
  javaHashSetOrder(tokens.map(javaStringHash), DEFAULT_SET_CAPACITY)
    .map((index) => tokens[index])
    .join(', ');

/** A request with no expression may carry no placeholders either. */
export const noExpressionsWith = (request: { readonly ExpressionAttributeNames?: unknown; readonly ExpressionAttributeValues?: unknown }): void => {
  if (request.ExpressionAttributeNames !== undefined || request.ExpressionAttributeValues !== undefined) {
    throw new Unsupported('ExpressionAttributeNames or ExpressionAttributeValues without an expression');
  }
};
