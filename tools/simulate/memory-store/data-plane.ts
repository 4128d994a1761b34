import type { Catalog, StoredTable } from './catalog';
import { holds } from './conditions';
import { CHECK_FAILED_MESSAGE, type CancellationReason, CONDITION_FAILED_MESSAGE, Unsupported, conditionFailed, transactionCanceled, validation } from './errors';
import { type Comparator, type Condition, type Operand, type UpdateAction, parseCondition, parseUpdate } from './expressions';
import { javaHashSetOrder, javaKeyHash } from './java-hash-order';
import { Placeholders, noExpressionsWith } from './placeholders';
import type { Page, RangeCondition, TableKey } from './table';
import { updated } from './updates';
import { type Item, checkedItem, compareText, itemAsPut, itemSizeBytes } from './values';

/*
 * The item calls: reads, single writes and transactions, each read and checked as DynamoDB Local
 * checks it before it looks at any item, then carried out whole or not at all. A condition that
 * fails cancels a transaction, naming every item's reason at its place.
 */

type Request = Readonly<Record<string, unknown>>;

const MAX_TRANSACTION_ITEMS = 100;
/** DynamoDB's item size limit; the service's items are far below it, so one above is refused loudly. */
const MAX_ITEM_BYTES = 400 * 1024;

const checkedLimit = (limit: unknown): number | undefined => {
  if (limit === undefined) return undefined;
  if (typeof limit !== 'number' || limit < 1) throw validation('Limit must be greater than or equal to 1');
  return limit;
};

const refuseUnsupported = (request: Request, names: readonly string[]) => {
  for (const name of names) if (request[name] !== undefined) throw new Unsupported(`${name} in this call`);
};

const within = (item: Item): Item => {
  if (itemSizeBytes(item) > MAX_ITEM_BYTES) throw new Unsupported('an item over 400 KB');
  return item;
};

type WriteKind = 'Put' | 'Update' | 'Delete' | 'ConditionCheck';

/** A write as its request says it: where, on what condition, and what it makes of the item. */
interface ParsedWrite {
  readonly kind: WriteKind;
  readonly stored: StoredTable;
  readonly key: TableKey;
  readonly condition?: Condition;
  readonly actions?: readonly UpdateAction[];
  readonly item?: Item;
  readonly returnOldOnFailure: boolean;
}

/** Reads a write's parameters and expressions, refusing what DynamoDB Local refuses before it looks at any item. */
const parseWrite = (catalog: Catalog, kind: WriteKind, request: Request): ParsedWrite => {
  const stored = catalog.table(request.TableName);
  const { table } = stored;
  const item = kind === 'Put' ? checkedItem(request.Item) : undefined;
  const key = item ? table.keyOfItem(item) : table.keyOf(checkedItem(request.Key));
  if (request.ConditionExpression === undefined && request.UpdateExpression === undefined) noExpressionsWith(request);
  if (kind === 'Update' && request.UpdateExpression === undefined) throw new Unsupported('an update without an UpdateExpression');
  const placeholders = new Placeholders(request.ExpressionAttributeNames as Record<string, string>, request.ExpressionAttributeValues as Record<string, unknown>);
  // DynamoDB Local reads the update before the condition: an undefined placeholder in both is the update's.
  const actions = kind === 'Update' ? parseUpdate(String(request.UpdateExpression), placeholders) : undefined;
  const condition = request.ConditionExpression === undefined ? undefined : parseCondition(String(request.ConditionExpression), 'ConditionExpression', placeholders);
  placeholders.checkAllUsed();
  const onFailure = request.ReturnValuesOnConditionCheckFailure;
  if (onFailure !== undefined && onFailure !== 'ALL_OLD' && onFailure !== 'NONE') throw new Unsupported(`ReturnValuesOnConditionCheckFailure ${String(onFailure)}`);
  return { kind, stored, key, condition, actions, item, returnOldOnFailure: onFailure === 'ALL_OLD' };
};

/** A write's outcome on the item as it is (`current`): whether its condition holds, and if so the item it leaves (undefined: none), a check none. */
const outcomeOf = ({ kind, stored: { table }, key, condition, actions, item }: ParsedWrite, current: Item | undefined) => {
  if (condition && !holds(condition, current ?? {})) return { conditionHolds: false } as const;
  if (kind === 'ConditionCheck') return { conditionHolds: true } as const;
  if (kind === 'Delete') return { conditionHolds: true, next: { item: undefined } } as const;
  const next = item ? itemAsPut(item) : updated(current ?? table.keyItem(key), actions ?? [], [table.keys.hash, table.keys.range]);
  table.checkIndexKeys(next);
  return { conditionHolds: true, next: { item: within(next) } } as const;
};

const writeOf = (kind: WriteKind) => (catalog: Catalog, request: Request) => {
  refuseUnsupported(request, ['Expected', 'ConditionalOperator', 'AttributeUpdates', 'ReturnItemCollectionMetrics']);
  const returnValues = request.ReturnValues ?? 'NONE';
  if (returnValues !== 'NONE' && !(kind !== 'Put' && (returnValues === 'ALL_OLD' || returnValues === 'ALL_NEW'))) {
    throw new Unsupported(`ReturnValues ${String(returnValues)} on a ${kind}`);
  }
  const write = parseWrite(catalog, kind, request);
  const current = write.stored.table.get(write.key);
  const outcome = outcomeOf(write, current);
  if (!outcome.conditionHolds) throw conditionFailed(write.returnOldOnFailure ? current : undefined);
  const next = outcome.next?.item;
  catalog.commit(write.stored, write.key, next);
  const returned = returnValues === 'ALL_OLD' ? current : returnValues === 'ALL_NEW' ? next : undefined;
  return returned ? { Attributes: returned } : {};
};

export const putItem = writeOf('Put');
export const updateItem = writeOf('Update');
export const deleteItem = writeOf('Delete');

const TRANSACT_WRITE_KINDS: readonly WriteKind[] = ['Put', 'Update', 'Delete', 'ConditionCheck'];

const ONE_ITEM_TWICE = 'Transaction request cannot include multiple operations on one item';

const itemId = (stored: StoredTable, key: TableKey) => JSON.stringify([stored.table.name, key.hash, key.range]);

/**
 * DynamoDB Local goes through a transaction's items in order, each seeing what the ones before it
 * wrote, and only then refuses one that names an item twice: a Put then a ConditionCheck
 * `attribute_not_exists` of the same item is cancelled (the check found the Put's item), not
 * refused. What a cancelled item found is the item as it was at its turn.
 */
export const transactWriteItems = (catalog: Catalog, request: Request) => {
  const items = (request.TransactItems ?? []) as Request[];
  if (items.length === 0) throw validation("Value [] at 'transactItems' failed to satisfy constraint: Member must have length greater than or equal to 1");
  if (items.length > MAX_TRANSACTION_ITEMS) throw validation(`Member must have length less than or equal to ${MAX_TRANSACTION_ITEMS}`);
  const writes = items.map((item) => {
    const kinds = TRANSACT_WRITE_KINDS.filter((kind) => item[kind] !== undefined);
    if (kinds.length !== 1) throw new Unsupported('a transaction item of no action, or of several');
    return parseWrite(catalog, kinds[0] as WriteKind, item[kinds[0] as WriteKind] as Request);
  });
  const token = request.ClientRequestToken;
  if (token !== undefined) {
    const { transactionTokens } = (writes[0] as ParsedWrite).stored;
    if (transactionTokens.has(String(token))) throw new Unsupported('a transaction sent again with its ClientRequestToken');
    transactionTokens.add(String(token));
  }
  const written = new Map<string, Item | undefined>();
  const reasons: CancellationReason[] = [];
  const commits: { readonly write: ParsedWrite; readonly item: Item | undefined }[] = [];
  for (const write of writes) {
    const id = itemId(write.stored, write.key);
    const current = written.has(id) ? written.get(id) : write.stored.table.get(write.key);
    const outcome = outcomeOf(write, current);
    if (!outcome.conditionHolds) {
      reasons.push({
        ...(write.returnOldOnFailure && current ? { Item: current } : {}),
        Code: 'ConditionalCheckFailed',
        Message: write.kind === 'ConditionCheck' ? CHECK_FAILED_MESSAGE : CONDITION_FAILED_MESSAGE,
      });
      continue;
    }
    reasons.push({ Code: 'None' });
    if (outcome.next) {
      written.set(id, outcome.next.item);
      commits.push({ write, item: outcome.next.item });
    }
  }
  if (reasons.some(({ Code }) => Code !== 'None')) throw transactionCanceled(reasons);
  const ids = writes.map(({ stored, key }) => itemId(stored, key));
  if (new Set(ids).size !== ids.length) throw validation(ONE_ITEM_TWICE);
  for (const { write, item } of commits) catalog.commit(write.stored, write.key, item);
  return {};
};

export const getItem = (catalog: Catalog, request: Request) => {
  refuseUnsupported(request, ['ProjectionExpression', 'AttributesToGet', 'ExpressionAttributeNames']);
  const { table } = catalog.table(request.TableName);
  const item = table.get(table.keyOf(checkedItem(request.Key)));
  return item ? { Item: item } : {};
};

export const transactGetItems = (catalog: Catalog, request: Request) => {
  const gets = ((request.TransactItems ?? []) as Request[]).map((item) => {
    const get = item.Get as Request | undefined;
    if (!get || Object.keys(item).length !== 1) throw new Unsupported('a transactional read of anything but Get');
    refuseUnsupported(get, ['ProjectionExpression', 'ExpressionAttributeNames']);
    const stored = catalog.table(get.TableName);
    return { stored, key: stored.table.keyOf(checkedItem(get.Key)) };
  });
  const ids = gets.map(({ stored, key }) => itemId(stored, key));
  if (new Set(ids).size !== ids.length) throw validation(ONE_ITEM_TWICE);
  return { Responses: gets.map(({ stored, key }) => {
    const item = stored.table.get(key);
    return item ? { Item: item } : {};
  }) };
};

/** Items in the order DynamoDB Local answers them: see java-hash-order.ts. */
export const batchGetItem = (catalog: Catalog, request: Request) => {
  const requested = Object.entries((request.RequestItems ?? {}) as Record<string, Request>);
  if (requested.length !== 1) throw new Unsupported('a BatchGetItem of other than one table');
  const responses = Object.fromEntries(
    requested.map(([tableName, { Keys, ...rest }]) => {
      refuseUnsupported(rest, ['ProjectionExpression', 'AttributesToGet', 'ExpressionAttributeNames']);
      const { table } = catalog.table(tableName);
      const keys = (Keys as unknown[]).map((key) => checkedItem(key));
      const tableKeys = keys.map((key) => table.keyOf(key));
      if (new Set(tableKeys.map(({ hash, range }) => JSON.stringify([hash, range]))).size !== keys.length) {
        throw validation('Provided list of item keys contains duplicates');
      }
      const order = javaHashSetOrder(keys.map(javaKeyHash), keys.length);
      const found = order.map((index) => table.get(tableKeys[index] as TableKey));
      return [tableName, found.filter((item) => item !== undefined)];
    }),
  );
  return { Responses: responses, UnprocessedKeys: {} };
};

const pageAnswer = ({ items, lastKey }: Page) => ({ Items: items, Count: items.length, ScannedCount: items.length, ...(lastKey ? { LastEvaluatedKey: lastKey } : {}) });

/** What a key condition asks of the sort key: a comparison, BETWEEN or begins_with on a string. */
const rangeCondition = (condition: Condition): RangeCondition => {
  const text = (operand: Operand) => {
    if (operand.kind !== 'value' || !('S' in operand.value)) throw new Unsupported('a key condition on anything but a string value');
    return operand.value.S;
  };
  if (condition.kind === 'between') {
    const [low, high] = [text(condition.low), text(condition.high)];
    return {
      holds: (range) => compareText(range, low) >= 0 && compareText(range, high) <= 0,
      continuesAfter: (range, forward) => (forward ? compareText(range, low) >= 0 && compareText(range, high) < 0 : compareText(range, low) > 0 && compareText(range, high) <= 0),
    };
  }
  if (condition.kind === 'begins_with') {
    const prefix = text(condition.argument);
    const holds = (range: string) => range.startsWith(prefix);
    return { holds, continuesAfter: holds };
  }
  if (condition.kind !== 'compare' || condition.comparator === '<>') throw validation('Query key condition not supported');
  const bound = text(condition.right);
  const orders: Record<Exclude<Comparator, '<>'>, (order: number) => boolean> = {
    '=': (order) => order === 0,
    '<': (order) => order < 0,
    '<=': (order) => order <= 0,
    '>': (order) => order > 0,
    '>=': (order) => order >= 0,
  };
  const order = orders[condition.comparator];
  const holds = (range: string) => order(compareText(range, bound));
  if (condition.comparator === '<=') return { holds, continuesAfter: (range, forward) => (forward ? compareText(range, bound) < 0 : holds(range)) };
  if (condition.comparator === '>=') return { holds, continuesAfter: (range, forward) => (forward ? holds(range) : compareText(range, bound) > 0) };
  return { holds, continuesAfter: holds };
};

/** The attribute a key condition's part is on: the path it names, a single attribute. */
const keyAttributeOf = (condition: Condition): string => {
  const operand = condition.kind === 'compare' ? condition.left : condition.kind === 'between' || condition.kind === 'begins_with' ? condition.operand : undefined;
  if (operand?.kind !== 'path' || operand.path.length !== 1) throw new Unsupported('a key condition on anything but a key attribute');
  return operand.path[0].name;
};

export const query = (catalog: Catalog, request: Request) => {
  refuseUnsupported(request, ['FilterExpression', 'ProjectionExpression', 'Select', 'AttributesToGet', 'KeyConditions', 'QueryFilter']);
  const { table } = catalog.table(request.TableName);
  const indexName = request.IndexName === undefined ? undefined : String(request.IndexName);
  const keys = indexName === undefined ? table.keys : table.indexKeys(indexName);
  if (indexName !== undefined && request.ConsistentRead === true) throw validation('Consistent reads are not supported on global secondary indexes');
  const placeholders = new Placeholders(request.ExpressionAttributeNames as Record<string, string>, request.ExpressionAttributeValues as Record<string, unknown>);
  const condition = parseCondition(String(request.KeyConditionExpression), 'KeyConditionExpression', placeholders);
  placeholders.checkAllUsed();
  const parts = condition.kind === 'and' ? [condition.left, condition.right] : [condition];
  const onHash = parts.find((part) => keyAttributeOf(part) === keys.hash);
  const onRange = parts.find((part) => part !== onHash);
  if (!onHash) throw validation('Query condition missed key schema element');
  if (onHash.kind !== 'compare' || onHash.comparator !== '=' || onHash.right.kind !== 'value' || !('S' in onHash.right.value)) {
    throw validation('Query key condition not supported');
  }
  if (onRange && keyAttributeOf(onRange) !== keys.range) throw new Unsupported('a key condition on anything but the sort key beside the partition key');
  return pageAnswer(
    table.query(
      {
        hashValue: onHash.right.value.S,
        ...(onRange ? { range: rangeCondition(onRange) } : {}),
        forward: request.ScanIndexForward !== false,
        limit: checkedLimit(request.Limit),
        startKey: request.ExclusiveStartKey === undefined ? undefined : checkedItem(request.ExclusiveStartKey),
      },
      indexName,
    ),
  );
};

export const scan = (catalog: Catalog, request: Request) => {
  refuseUnsupported(request, ['FilterExpression', 'ProjectionExpression', 'Select', 'AttributesToGet', 'ScanFilter', 'Segment', 'TotalSegments', 'IndexName']);
  noExpressionsWith(request);
  const { table } = catalog.table(request.TableName);
  const startKey = request.ExclusiveStartKey === undefined ? undefined : checkedItem(request.ExclusiveStartKey);
  return pageAnswer(table.scan(checkedLimit(request.Limit), startKey));
};
