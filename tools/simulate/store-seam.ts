import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import type { DocumentSender } from '../../functions/store/store-calls';
import { PK, SK } from '../../functions/store/fields';
import type { CallShape, Waiting } from './scheduler';

/*
 * The seam between the code under test and DynamoDB Local: the repository's DocumentSender. Every
 * call the adapter sends parks in the run's Waiting; the run sends it to the store of record when
 * its turn comes, or fails it as the faults say. What each fault does is written where it is made.
 */

type Item = Record<string, unknown>;
type TransactItem = { Put?: { Item: Item }; Update?: { Key: Item }; Delete?: { Key: Item }; ConditionCheck?: { Key: Item }; Get?: { Key: Item } };

const keyText = (key: Item | undefined): string => `${String(key?.[PK] ?? '?')} ${String(key?.[SK] ?? '?')}`;

const transactItem = (item: TransactItem): { kind: string; key: string } => {
  if (item.Put) return { kind: 'Put', key: keyText(item.Put.Item) };
  if (item.Update) return { kind: 'Update', key: keyText(item.Update.Key) };
  if (item.Delete) return { kind: 'Delete', key: keyText(item.Delete.Key) };
  if (item.ConditionCheck) return { kind: 'Check', key: keyText(item.ConditionCheck.Key) };
  return { kind: 'Get', key: keyText(item.Get?.Key) };
};

/** The partition a Query reads: the value its key condition's first comparison names, on the index it names. */
const queriedPartition = (input: { KeyConditionExpression?: string; ExpressionAttributeValues?: Item; IndexName?: string }): string => {
  const placeholder = /=\s*(:\w+)/.exec(input.KeyConditionExpression ?? '')?.[1] ?? '';
  const value = String(input.ExpressionAttributeValues?.[placeholder] ?? '?');
  return input.IndexName ? `${input.IndexName}:${value}` : value;
};

/** What the story and the conflict model need to know of a call. */
export const shapeOf = (command: { readonly input: unknown }): CallShape => {
  const operation = command.constructor.name.replace(/Command$/, '');
  const input = command.input as Record<string, unknown>;
  const shape = (items: string[], writes: boolean, text: string, checks = 0): CallShape => ({ operation, items, writes, checks, text: `${operation} ${text}` });
  switch (operation) {
    case 'TransactWrite':
    case 'TransactGet': {
      const items = (input.TransactItems as TransactItem[]).map(transactItem);
      return shape(
        items.map(({ key }) => key),
        operation === 'TransactWrite',
        items.map(({ kind, key }) => (operation === 'TransactWrite' ? `${kind} ${key}` : key)).join(', '),
        items.filter(({ kind }) => kind === 'Check').length,
      );
    }
    case 'Query': {
      const partition = queriedPartition(input);
      return shape([partition], false, partition);
    }
    case 'BatchGet': {
      const keys = Object.values(input.RequestItems as Record<string, { Keys: Item[] }>).flatMap(({ Keys }) => Keys.map(keyText));
      return shape(keys, false, keys.join(', '));
    }
    case 'Put':
      return shape([keyText(input.Item as Item)], true, keyText(input.Item as Item));
    default:
      return shape([keyText(input.Key as Item)], operation !== 'Get', keyText(input.Key as Item));
  }
};

/** Whether two calls' items meet: the same item, or an item in a partition the other reads whole. */
export const itemsMeet = (one: readonly string[], other: readonly string[]): boolean =>
  one.some((a) => other.some((b) => a === b || b.startsWith(`${a} `) || a.startsWith(`${b} `)));

/** A sender for one function instance: its calls wait their turn in `waiting`. */
export const scheduledSender = (waiting: Waiting): DocumentSender =>
  ({ send: (command: { readonly input: unknown }) => waiting.call(command, shapeOf(command)) }) as unknown as DocumentSender;

/**
 * A transaction DynamoDB cancelled for one of its items, as it answers it: the reason at that item's
 * place, None at the others'. TransactionConflict: another transaction held the item;
 * ThrottlingError: the item's partition was over its rate.
 */
export const cancellation = (items: number, at: number, code: 'TransactionConflict' | 'ThrottlingError'): TransactionCanceledException =>
  new TransactionCanceledException({
    message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${code}]`,
    $metadata: { httpStatusCode: 400 },
    CancellationReasons: Array.from({ length: items }, (_, index) =>
      index === at ? { Code: code, Message: code === 'TransactionConflict' ? 'Transaction is ongoing for the item' : 'Throughput exceeds the current capacity' } : { Code: 'None' },
    ),
  });

/** What the SDK throws once its own retries of a throttled call are spent. */
export const throttled = (): Error =>
  Object.assign(new Error('The level of configured provisioned throughput for the table was exceeded'), {
    name: 'ProvisionedThroughputExceededException',
    $metadata: { httpStatusCode: 400 },
  });

/** What the SDK throws when no answer came in time: the call may have committed. */
export const answerLost = (): Error => Object.assign(new Error('Socket timed out without establishing a connection within 2000 ms'), { name: 'TimeoutError' });
