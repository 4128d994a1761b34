import { BatchWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { HeldLine, Hold, Instant } from '../../domain/holds';
import { batchWithStockKey } from '../../functions/store/batches';
import { heldBoundOf, heldBoundWrite } from '../../functions/store/held-bounds';
import { withValues } from '../../functions/store/conditions';
import { heldUnitsPuts } from '../../functions/store/held-units';
import { newHoldWrite } from '../../functions/store/holds';
import type { DocumentSender } from '../../functions/store/store-calls';

/** DynamoDB's most for one BatchWriteItem. */
const ITEMS_PER_CALL = 25;
const CALLS_IN_FLIGHT = 8;

/**
 * Active holds of 1 unit each on one batch kept whole, stored as placing them writes them (each
 * hold's record and its held units' record, and the batch's bound) but 25 items a call, several calls at once, and then
 * counted on the batch item in one update: what is measured on such a batch is the requests that
 * meet them, not how fast a store takes thousands of holds (the drop with carts measures that).
 * Placed one by one through the service they would hold one DynamoDB Local for minutes.
 */
export const storeActiveHolds = async (
  sender: DocumentSender,
  tableName: string,
  batch: { readonly sku: string; readonly ref: string },
  holdids: readonly string[],
  expiresAt: string,
  now: Instant,
): Promise<void> => {
  const holds: Hold[] = holdids.map((holdid) => ({
    holdid,
    lines: [{ sku: batch.sku, qty: 1, batchref: batch.ref, sources: [{ qty: 1 }] }],
    status: 'active',
    expiresAt,
  }));
  const items = holds.flatMap((hold) => [newHoldWrite(tableName, hold, now), ...heldUnitsPuts(tableName, hold, hold.lines[0] as HeldLine, [{ qty: 1 }])]);
  const calls = Array.from({ length: Math.ceil(items.length / ITEMS_PER_CALL) }, (_, call) =>
    items.slice(call * ITEMS_PER_CALL, (call + 1) * ITEMS_PER_CALL).map(({ Put }) => ({ PutRequest: { Item: Put?.Item as Record<string, unknown> } })),
  );
  const writer = async () => {
    for (let puts = calls.pop(); puts; puts = calls.pop()) {
      let unprocessed: Record<string, unknown>[] | undefined = puts;
      while (unprocessed?.length) {
        const { UnprocessedItems } = await sender.send(new BatchWriteCommand({ RequestItems: { [tableName]: unprocessed as never } }));
        unprocessed = UnprocessedItems?.[tableName] as Record<string, unknown>[] | undefined;
      }
    }
  };
  await Promise.all(Array.from({ length: CALLS_IN_FLIGHT }, writer));
  // The batch's bound on their expiry kept as their takes keep it (functions/store/held-bounds.ts, "Bounds of held units").
  const bound = heldBoundWrite('keep', heldBoundOf(expiresAt));
  await sender.send(
    new UpdateCommand({
      TableName: tableName,
      Key: batchWithStockKey(batch.sku, batch.ref),
      UpdateExpression: `SET available = available - :held, heldUnits = if_not_exists(heldUnits, :none) + :held, ${bound.set}`,
      ...withValues(bound.condition, { ':held': holds.length, ':none': 0 }),
    }),
  );
};
