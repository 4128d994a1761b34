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

/** The longest id of a batch's count, in UTF-8: the sort key of the batch's record of the change names it, within DynamoDB's 1,024 bytes. */
const MAX_BATCH_COUNT_ID_BYTES = 900;

/** Batches whose count basis is read at once: a place's batches are read a few at a time, not all at once. */
const BASES_AT_ONCE = 10;
/** References described in one read (BatchGetItem's bound). */
const DESCRIBED_AT_ONCE = 100;

/** The emptied batches among `refs` that changed after `countedAt`, as their references say (one whose reference the read left unanswered among them): the others had no unit then either. */
const changedAfter = async (refs: readonly string[], countedAt: string, repository: BatchRepository): Promise<Set<string>> => {
  const changed = new Set<string>();
  for (let start = 0; start < refs.length; start += DESCRIBED_AT_ONCE) {
    const group = refs.slice(start, start + DESCRIBED_AT_ONCE);
    const { batches } = await repository.importRowsRead(group, []);
    for (const ref of group) {
      const described = batches.get(ref);
      if (described === undefined || (described !== null && described.changedAt > countedAt)) changed.add(ref);
    }
  }
  return changed;
};

/** `items` mapped `size` at a time, in their order. */
const mappedInGroups = async <Item, Mapped>(items: readonly Item[], size: number, map: (item: Item) => Promise<Mapped>): Promise<Mapped[]> => {
  const mapped: Mapped[] = [];
  for (let start = 0; start < items.length; start += size) mapped.push(...(await Promise.all(items.slice(start, start + size).map(map))));
  return mapped;
};

/**
 * The plan of a count at a place on its batches as they are: those of its SKU in stock at its place
 * that were on the shelf at the row's moment (with units now, or emptied since), each with its
 * units then. A batch that came onto the shelf since (added, or arrived) had none there, and is left
 * out. Refused as stale when one of them was counted after the row's moment (nothing planned), and
 * when it counts units that no batch there can take.
 */
const plannedCount = async ({ sku, location, onHand }: PlaceCountRow, countedAt: string, repository: BatchRepository): Promise<BatchCount[]> => {
  const { withStock, exhausted } = await batchesWithUnitsOf(sku, repository, { emptied: true });
  const atPlace = [...withStock, ...exhausted].filter((batch) => batch.eta === null && locationOf(batch) === location);
  const emptiedSince = await changedAfter(atPlace.flatMap(({ ref, qty }) => (qty === 0 ? [ref] : [])), countedAt, repository);
  const onShelf = atPlace.filter(({ ref, qty }) => qty > 0 || emptiedSince.has(ref));
  const counted = (
    await mappedInGroups(onShelf, BASES_AT_ONCE, async ({ ref, qty, available }): Promise<CountedBatch[]> => {
      const basis = await repository.countBasis(ref, countedAt);
      if (basis.cameSince) return [];
      if (basis.lastCountedAt !== undefined && basis.lastCountedAt > countedAt) throw new StaleCount(ref, countedAt, basis.lastCountedAt);
      return [{ ref, qty, available, asOf: Math.max(0, qty - basis.changedSince) }];
    })
  ).flat();
  if (counted.length === 0 && onHand > 0) throw new AdjustmentRefused('on_hand', `must be 0: no batch of sku ${sku} was in stock at ${location} at ${countedAt} to take them; a batch row adds one`);
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
  const tooLong = plan.find(({ ref }) => new TextEncoder().encode(batchCountId(changeId, ref)).length > MAX_BATCH_COUNT_ID_BYTES);
  if (tooLong) throw new AdjustmentRefused('on_hand', `cannot be counted on batch ${tooLong.ref}: the import's id, the row's number and the batch's ref make an id of more than ${MAX_BATCH_COUNT_ID_BYTES} bytes; send it under a shorter importid`);
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
