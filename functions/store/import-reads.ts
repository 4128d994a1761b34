import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import type { DescribedBatch, ImportRowsRead } from '../../domain/imports';
import { DEFAULT_LOCATION_ID } from '../../domain/locations';
import { adjustmentKey } from './adjustments';
import { ADDED_BY, batchReferenceKey, parseBatchItem } from './batches';
import { PK, SK } from './fields';
import type { DocumentSender, StoreCalls } from './store-calls';

/*
 * The one read of a chunk of an import's rows (domain/imports.ts, ImportRowsRead): a BatchGetItem
 * of the batches' references, whose copy of each batch's sku, place, qty and eta every write of the
 * batch keeps in step, and of the rows' change ids' adjustments. A chunk holds 25 rows, so 50 keys
 * at most, under BatchGetItem's 100.
 */

const keyText = (key: Record<string, unknown>) => `${String(key[PK])}\u0000${String(key[SK])}`;

export const importRowsRead = async (calls: StoreCalls, client: DocumentSender, tableName: string, refs: readonly string[], changeIds: readonly string[]): Promise<ImportRowsRead> => {
  const references = refs.map((ref) => ({ ref, key: batchReferenceKey(ref) }));
  const adjustments = changeIds.map((changeId) => ({ changeId, key: adjustmentKey(changeId) }));
  const { Responses, UnprocessedKeys } = await calls.call((options) =>
    client.send(new BatchGetCommand({ RequestItems: { [tableName]: { Keys: [...references, ...adjustments].map(({ key }) => key), ConsistentRead: true } } }), options),
  );
  const found = new Map((Responses?.[tableName] ?? []).map((item) => [keyText(item), item]));
  // Keys the store left unread (throttled) are left out: their rows read alone.
  const unread = new Set((UnprocessedKeys?.[tableName]?.Keys ?? []).map(keyText));
  const batches = new Map<string, DescribedBatch | null>();
  for (const { ref, key } of references) {
    if (unread.has(keyText(key))) continue;
    const item = found.get(keyText(key));
    const stored = item && parseBatchItem(item);
    if (!item) batches.set(ref, null);
    else if (stored?.kind === 'batch-reference' && stored.description) {
      const { qty, eta, location, changedAt } = stored.description;
      const addedBy = item[ADDED_BY];
      batches.set(ref, { sku: stored.sku, location: location ?? DEFAULT_LOCATION_ID, qty, eta, changedAt, ...(typeof addedBy === 'string' ? { addedBy } : {}) });
    }
  }
  const adjusted = new Map<string, boolean>();
  for (const { changeId, key } of adjustments) if (!unread.has(keyText(key))) adjusted.set(changeId, found.has(keyText(key)));
  return { batches, adjusted };
};
