import { QueryCommand, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import type { ListRequest, ListedSkus, SkuList } from '../../domain/stock-listings';
import { isText, shardOf } from './fields';
import type { DocumentSender, StoreCalls } from './store-calls';
import { partitionKeyPrefix, skuListsIndex } from './table';

/*
 * The lists of SKUs (items.ts, "The table's items"; table.ts, skuListsIndex): the attribute that puts
 * an item in a list, the shard of a list each SKU is in, and the read of a page. The items listed
 * are batches.ts's (the known-SKU item, a SKU's item at a location), written with every new batch.
 */

/** The attribute that names the list, and the shard of it, an item is in: the index's partition key. */
export const LISTED_IN = skuListsIndex.partitionKey.name;

const shardsOf = (list: SkuList): string[] =>
  Array.from({ length: skuListsIndex.shards }, (_, shard) =>
    list.kind === 'all' ? `${partitionKeyPrefix.allSkus}${shard}` : `${partitionKeyPrefix.locationSkus}${list.location}#${shard}`,
  );

/** The shard of the list the SKU is in: the same for every write of it. */
export const listedIn = (list: SkuList, sku: string): string => shardsOf(list)[shardOf(sku, skuListsIndex.shards)] as string;

/**
 * BatchRepository.listedSkus: the list's shards one after another, each from the SKU after
 * `request.after` in its own (a key condition, so each read starts where the last page ended), each
 * read up to the SKUs the page still lacks. A page reads at most one Query for each shard, and more
 * only where one answers a megabyte, which keys alone never reach in a page's hundred.
 */
export const listedSkusPage = async (calls: StoreCalls, client: DocumentSender, tableName: string, list: SkuList, { limit, after }: ListRequest): Promise<ListedSkus> => {
  const shards = shardsOf(list);
  const skus: string[] = [];
  for (let part = after?.part ?? 0; part < shards.length; part++) {
    let from = part === after?.part ? after.sku : undefined;
    for (;;) {
      const page: QueryCommandOutput = await calls.call((options) =>
        client.send(
          new QueryCommand({
            TableName: tableName,
            IndexName: skuListsIndex.name,
            KeyConditionExpression: from === undefined ? `${LISTED_IN} = :list` : `${LISTED_IN} = :list AND ${skuListsIndex.sortKey.name} > :from`,
            ExpressionAttributeValues: { ':list': shards[part], ...(from === undefined ? {} : { ':from': from }) },
            Limit: limit - skus.length,
          }),
          options,
        ),
      );
      const read = (page.Items ?? []).map((item) => item[skuListsIndex.sortKey.name]).filter(isText);
      skus.push(...read);
      if (skus.length === limit) return { skus, next: { part, sku: read.at(-1) as string } };
      if (!page.LastEvaluatedKey || read.length === 0) break;
      from = read.at(-1);
    }
  }
  return { skus };
};
