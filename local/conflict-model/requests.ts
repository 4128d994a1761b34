/*
 * What a DynamoDB request (awsJson1_0: `X-Amz-Target: DynamoDB_20120810.<Operation>`, a JSON body)
 * touches, as the conflict model needs it: which items, in which tables, and how big each write is.
 */

/** An attribute value as the JSON protocol writes it: `{"S": "..."}`, `{"N": "1"}`, ... */
export type AttributeValue = Readonly<Record<string, unknown>>;
export type AttributeMap = Readonly<Record<string, AttributeValue>>;

/**
 * Writes in a transaction, writes of one item, and reads in a transaction: the requests that
 * DynamoDB's conflict handling is about. Every other operation passes through unmodelled.
 */
export type ModelledKind = 'transactional-write' | 'single-write' | 'transactional-read';

const KIND_OF_OPERATION: Readonly<Record<string, ModelledKind>> = {
  TransactWriteItems: 'transactional-write',
  PutItem: 'single-write',
  UpdateItem: 'single-write',
  DeleteItem: 'single-write',
  TransactGetItems: 'transactional-read',
};

const TARGET_PREFIX = 'DynamoDB_20120810.';

/** One item a request names, before the table's key schema says which attributes make its key. */
export interface NamedItem {
  readonly tableName: string;
  /** `Key` as sent, or the whole `Item` of a put, which holds the key among its attributes. */
  readonly attributes: AttributeMap;
  /** The size the request shows of what it writes, in bytes of its JSON (0 for a read). */
  readonly writtenBytes: number;
}

export interface ModelledRequest {
  readonly kind: ModelledKind;
  /** In the order of the request, so that a cancellation's reasons line up with its items. */
  readonly items: readonly NamedItem[];
  /** A transaction's idempotency token: the SDK fills one in, and its retries of the call send the same. */
  readonly clientRequestToken?: string;
}

const jsonBytes = (value: unknown) => (value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value)));

interface WriteAction {
  readonly TableName: string;
  readonly Key?: AttributeMap;
  readonly Item?: AttributeMap;
  readonly ExpressionAttributeValues?: AttributeMap;
}

/**
 * A put writes its whole item; an update, what its expression sets, which is all the request shows
 * of the item (AWS bills the larger of the item before and after: a large item updated by a small
 * expression costs more than this).
 */
const writtenItem = ({ TableName, Key, Item, ExpressionAttributeValues }: WriteAction): NamedItem | undefined => {
  const attributes = Item ?? Key;
  if (typeof TableName !== 'string' || !attributes) return undefined;
  return { tableName: TableName, attributes, writtenBytes: Item ? jsonBytes(Item) : jsonBytes(Key) + jsonBytes(ExpressionAttributeValues) };
};

/** One entry of `TransactItems`: a write action of TransactWriteItems, or the `Get` of TransactGetItems. */
type TransactItem = Readonly<Partial<Record<'Put' | 'Update' | 'Delete' | 'ConditionCheck' | 'Get', WriteAction>>>;

const itemsOf = (kind: ModelledKind, body: Record<string, unknown>): (NamedItem | undefined)[] => {
  if (kind === 'single-write') return [writtenItem(body as unknown as WriteAction)];
  const transactItems = Array.isArray(body.TransactItems) ? (body.TransactItems as (TransactItem | null)[]) : [];
  if (kind === 'transactional-read') {
    return transactItems.map((action) => {
      const get = action?.Get;
      return get && typeof get.TableName === 'string' && get.Key ? { tableName: get.TableName, attributes: get.Key, writtenBytes: 0 } : undefined;
    });
  }
  return transactItems.map((action) => {
    const write = action?.Put ?? action?.Update ?? action?.Delete ?? action?.ConditionCheck;
    return write ? writtenItem(write) : undefined;
  });
};

/**
 * The request as the model sees it, or undefined when it is not one the model is about, or is
 * malformed: DynamoDB Local then answers it as it would, with its own validation error.
 */
export const modelledRequest = (target: string | undefined, body: string): ModelledRequest | undefined => {
  if (!target?.startsWith(TARGET_PREFIX)) return undefined;
  const kind = KIND_OF_OPERATION[target.slice(TARGET_PREFIX.length)];
  if (!kind) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const items = itemsOf(kind, parsed as Record<string, unknown>);
  if (items.length === 0 || items.some((item) => item === undefined)) return undefined;
  const { ClientRequestToken } = parsed as { ClientRequestToken?: unknown };
  return { kind, items: items as NamedItem[], ...(typeof ClientRequestToken === 'string' ? { clientRequestToken: ClientRequestToken } : {}) };
};

/** DynamoDB bills a write by the item's size in 1 KB units, rounded up: 1 at least. */
export const writeUnitsOf = (writtenBytes: number): number => Math.max(1, Math.ceil(writtenBytes / 1024));
