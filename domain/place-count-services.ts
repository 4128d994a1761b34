import { adjustStock } from './adjustment-services';
import type { AdjustmentRequest } from './adjustments';
import { AdjustmentRefused, StaleCount } from './errors';
import { type ImportRecord, type PlaceCountRow, rowChangeId } from './imports';
import { locationOf } from './model';
import { type BatchCount, type CountedBatch, MAX_PLACE_COUNT_BATCHES, placeCountOf } from './place-counts';
import type { BatchRepository } from './ports';
import { batchesWithUnitsOf } from './services';

/*
 * A count at a place, as an import's row makes it (domain/place-counts.ts): planned once, on the
 * batches as read, and the plan saved with the row's import, so that a send of the row resumed
 * makes the counts the first send planned, never a second plan over batches the first changed.
 * Each batch's count is made by adjustStock, as POST /adjustments makes one, under the row's
 * change id and the batch's ref.
 */

/** The id of the count that a row, a count at a place, makes of one batch: once, however often the row is applied. */
export const batchCountId = (changeId: string, ref: string) => `${changeId}#${ref}`;

/**
 * The plan of a count at a place on its batches as they are: those of its SKU in stock at its place
 * with units on hand. Refused as stale when one of them was counted after the row's moment (nothing
 * planned), and when it counts units that no batch there can take.
 */
const plannedCount = async ({ sku, location, onHand }: PlaceCountRow, countedAt: string, repository: BatchRepository): Promise<BatchCount[]> => {
  const { withStock, exhausted } = await batchesWithUnitsOf(sku, repository);
  const batches = [...withStock, ...exhausted].filter((batch) => batch.eta === null && locationOf(batch) === location);
  if (batches.length === 0 && onHand > 0) throw new AdjustmentRefused('on_hand', `must be 0: no batch of sku ${sku} has units in stock at ${location} to take them; a batch row adds one`);
  const counted = await Promise.all(
    batches.map(async ({ ref, qty, available }): Promise<CountedBatch> => {
      const basis = await repository.countBasis(ref, countedAt);
      if (basis.lastCountedAt !== undefined && basis.lastCountedAt > countedAt) throw new StaleCount(ref, countedAt, basis.lastCountedAt);
      return { ref, qty, available, asOf: Math.max(0, qty - basis.changedSince) };
    }),
  );
  const plan = placeCountOf(onHand, counted);
  if (plan.length > MAX_PLACE_COUNT_BATCHES) throw new AdjustmentRefused('on_hand', `must not change more than ${MAX_PLACE_COUNT_BATCHES} batches of sku ${sku} at ${location}: it would change ${plan.length}`);
  return plan;
};

/**
 * Applies the import's row, a count at a place: `unchanged` when its batches held what it counts
 * (nothing written), else `applied` (in a dry run, it would be), each batch's count made as of the
 * row's moment. A batch counted after that moment between the plan and its count keeps its later
 * count; the row is stale when every batch it changes did.
 */
export const applyPlaceCount = async ({ importid, dryRun }: ImportRecord, row: number, read: PlaceCountRow, repository: BatchRepository): Promise<'applied' | 'unchanged'> => {
  const changeId = rowChangeId(importid, row);
  const countedAt = new Date(read.countedAt).toISOString();
  const saved = await repository.placeCount(importid, row);
  const plan = saved ?? (await plannedCount(read, countedAt, repository));
  if (plan.length === 0) return 'unchanged';
  if (dryRun) return 'applied';
  const counts = saved ?? (await repository.savePlaceCount(importid, row, plan));
  let made = false;
  let stale: StaleCount | undefined;
  for (const { ref, qty } of counts) {
    const count: AdjustmentRequest = { adjustmentid: batchCountId(changeId, ref), ref, reason: 'counted', qty, countedAt };
    try {
      await adjustStock(count, repository);
      made = true;
    } catch (error) {
      if (!(error instanceof StaleCount)) throw error;
      stale = error;
    }
  }
  if (!made && stale) throw stale;
  return 'applied';
};
