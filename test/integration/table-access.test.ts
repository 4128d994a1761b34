import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAddBatchHandler } from '../../functions/add-batch';
import { createAllocateHandler } from '../../functions/allocate';
import type { DocumentSender } from '../../functions/store/batch-repository';
import { type TableAccess, tableAccess } from '../../functions/store/table';
import { type TestTable, createTestTable, uniqueId } from '../support/dynamodb';
import { lambdaContext, postEvent } from '../support/events';

/*
 * The stack grants each function's role only the actions, partition key prefixes and written
 * attributes that `tableAccess` lists (functions/store/table.ts). IAM is not there to refuse
 * anything locally, so this records every call the adapter sends while each handler answers its
 * every kind of request, and checks each call against what that handler's role will be granted on
 * AWS: a call outside it would be AccessDenied in production only.
 */

interface StoreAction {
  readonly action: string;
  readonly partitionKey: string;
  /** Attribute names the call writes or names in its expressions; only checked for writes. */
  readonly attributes: readonly string[];
}

interface SentCommand {
  readonly input: Record<string, unknown>;
  readonly clientCommand?: object;
}

const EXPRESSION_WORDS = new Set([
  'AND', 'OR', 'NOT', 'SET', 'REMOVE', 'ADD', 'DELETE', 'BETWEEN', 'IN',
  'attribute_exists', 'attribute_not_exists', 'attribute_type', 'begins_with', 'contains', 'size', 'if_not_exists', 'list_append',
]);

/** The attribute names an expression refers to: its words that are not values (`:x`) or keywords. */
const namesIn = (expression: unknown, names: Record<string, string> = {}): string[] =>
  typeof expression === 'string'
    ? [...expression.matchAll(/(?<![:\w#])#?[A-Za-z_]\w*/g)]
        .map(([word]) => (word.startsWith('#') ? (names[word] ?? word) : word))
        .filter((word) => !EXPRESSION_WORDS.has(word))
    : [];

const actionOf = (action: string, input: Record<string, unknown>): StoreAction => {
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const item = (input.Item ?? input.Key ?? {}) as Record<string, unknown>;
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
  const partitionKey = action === 'dynamodb:Query' ? String(values[':partition']) : String(item.pk);
  return {
    action,
    partitionKey,
    attributes: [
      ...Object.keys(item),
      ...namesIn(input.UpdateExpression, names),
      ...namesIn(input.ConditionExpression, names),
      ...namesIn(input.KeyConditionExpression, names),
    ],
  };
};

const TRANSACTION_ACTIONS: Record<string, string> = {
  Put: 'dynamodb:PutItem',
  Update: 'dynamodb:UpdateItem',
  Delete: 'dynamodb:DeleteItem',
  ConditionCheck: 'dynamodb:ConditionCheckItem',
};

const actionsOf = (command: SentCommand): StoreAction[] => {
  const operation = (command.clientCommand ?? command).constructor.name.replace(/Command$/, '');
  if (operation === 'TransactWriteItems') {
    return (command.input.TransactItems as Record<string, Record<string, unknown>>[]).flatMap((transactItem) =>
      Object.entries(transactItem).map(([kind, input]) => actionOf(TRANSACTION_ACTIONS[kind] ?? kind, input)),
    );
  }
  return [actionOf(`dynamodb:${operation}`, command.input)];
};

const recording = (client: DocumentSender) => {
  const actions: StoreAction[] = [];
  const sender = {
    send: (async (command: SentCommand, options?: object) => {
      actions.push(...actionsOf(command));
      return client.send(command as never, options);
    }) as unknown as DocumentSender['send'],
  };
  return { sender, actions };
};

const outsideGrant = (actions: readonly StoreAction[], access: TableAccess) =>
  actions.filter(({ action, partitionKey, attributes }) => {
    const isWrite = access.writes.includes(action);
    return (
      !(isWrite || access.reads.includes(action)) ||
      !access.partitionKeyPrefixes.some((prefix) => partitionKey.startsWith(prefix)) ||
      (isWrite && attributes.some((attribute) => !access.writtenAttributes.includes(attribute)))
    );
  });

let table: TestTable;
beforeAll(async () => {
  table = await createTestTable();
});
afterAll(() => table.drop());

describe("each handler's calls to the table stay within what its role is granted", () => {
  it('add_batch: a new batch of a new SKU, another batch of it, a duplicate reference', async () => {
    const { sender, actions } = recording(table.documentClient);
    const addBatch = createAddBatchHandler(table.repository({ sender }));
    const sku = uniqueId('sku');
    const statuses = [];
    for (const batch of [
      { ref: uniqueId('batch'), sku, qty: 5, eta: null },
      { ref: uniqueId('batch'), sku, qty: 5, eta: '2030-01-01' },
    ]) {
      statuses.push((await addBatch(postEvent('/add_batch', batch), lambdaContext())).statusCode);
      statuses.push((await addBatch(postEvent('/add_batch', batch), lambdaContext())).statusCode);
    }

    expect(statuses).toEqual([201, 409, 201, 409]);
    expect(actions.length).toBeGreaterThan(0);
    expect(outsideGrant(actions, tableAccess.addBatch)).toEqual([]);
  });

  it('allocate: a new line, a repeat, another qty, the last units of a shipment, out of stock, an unknown SKU', async () => {
    const sku = uniqueId('sku');
    await table.repository().addBatch({ ref: uniqueId('batch'), sku, qty: 5, available: 5, eta: null });
    await table.repository().addBatch({ ref: uniqueId('batch'), sku, qty: 3, available: 3, eta: '2030-01-01' });
    const { sender, actions } = recording(table.documentClient);
    const allocate = createAllocateHandler(table.repository({ sender }));
    const line = { orderid: uniqueId('order'), sku, qty: 4 };
    const statuses = [];
    for (const body of [
      line,
      line,
      { ...line, qty: 2 },
      { orderid: uniqueId('order'), sku, qty: 1 },
      { orderid: uniqueId('order'), sku, qty: 3 },
      { orderid: uniqueId('order'), sku, qty: 1 },
      { orderid: uniqueId('order'), sku: uniqueId('sku'), qty: 1 },
    ]) {
      statuses.push((await allocate(postEvent('/allocate', body), lambdaContext())).statusCode);
    }

    expect(statuses).toEqual([201, 200, 409, 201, 201, 400, 400]);
    expect(actions.map(({ action }) => action)).toContain('dynamodb:DeleteItem');
    expect(outsideGrant(actions, tableAccess.allocate)).toEqual([]);
  });
});
