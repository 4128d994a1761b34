import { GetCommand, QueryCommand, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import { PK, SK } from './fields';
import type { DocumentSender, StoreCalls } from './store-calls';

/**
 * The table's reads that every kind of item shares: one item by its key, a partition or a range of
 * it page by page. All strongly consistent: a stale read of stock would offer stock already taken
 * (the conditional write would still refuse it), and a stale read of an order would miss a line
 * just confirmed.
 */
export class TableReads {
  constructor(
    private readonly calls: StoreCalls,
    private readonly client: DocumentSender,
    private readonly tableName: string,
  ) {}

  async item(key: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
    const { Item } = await this.calls.call((options) => this.client.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }), options));
    return Item;
  }

  /** Every item of a partition, or of the sort keys beginning with `sortKeyPrefix`. */
  partition(partition: string, sortKeyPrefix?: string): Promise<Record<string, unknown>[]> {
    return sortKeyPrefix === undefined
      ? this.query(`${PK} = :partition`, { ':partition': partition })
      : this.query(`${PK} = :partition AND begins_with(${SK}, :prefix)`, { ':partition': partition, ':prefix': sortKeyPrefix });
  }

  /** Up to `limit` items of a partition whose sort keys lie from `first` to `last`, in key order or the reverse. */
  range(partition: string, first: string, last: string, order: { latestFirst: boolean; limit: number }): Promise<Record<string, unknown>[]> {
    return this.query(`${PK} = :partition AND ${SK} BETWEEN :first AND :last`, { ':partition': partition, ':first': first, ':last': last }, order);
  }

  private async query(
    KeyConditionExpression: string,
    ExpressionAttributeValues: Record<string, unknown>,
    { latestFirst = false, limit = Number.POSITIVE_INFINITY } = {},
  ): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let startKey: QueryCommandOutput['LastEvaluatedKey'];
    do {
      const page: QueryCommandOutput = await this.calls.call((options) =>
        this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression,
            ExpressionAttributeValues,
            ConsistentRead: true,
            ...(latestFirst ? { ScanIndexForward: false } : {}),
            ...(Number.isFinite(limit) ? { Limit: limit - items.length } : {}),
            ExclusiveStartKey: startKey,
          }),
          options,
        ),
      );
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey && items.length < limit);
    return items;
  }
}
