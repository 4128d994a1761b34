import { COUNT_WINDOW_MS } from '../domain/adjustments';
import type { Instant } from '../domain/holds';
import type { Batch } from '../domain/model';
import { MIN_HISTORY_RETENTION_DAYS, type RecordedStockChange } from '../functions/store/stock-changes';

const DAY_MS = 24 * 60 * 60 * 1_000;

/**
 * `npm run check`'s rule `changes-recorded`: every change of a batch's qty is recorded, once, in its
 * own write (docs/api.md, "History"), so a batch's changes add up to its qty. Held only of a batch
 * whose every change is surely still kept, whatever the history's retention was set to: its first
 * change (its addition, or its coming as a transfer's incoming batch) within the last day, since a
 * count may be dated COUNT_WINDOW_MS before it, and the shortest retention keeps a record
 * MIN_HISTORY_RETENTION_DAYS from its moment; and, under a ref once a transfer's incoming batch
 * that was cancelled, that batch's coming still recorded beside its going.
 */
export const changesRecorded = (batches: readonly Batch[], changes: readonly RecordedStockChange[], now: Instant): { readonly rule: 'changes-recorded'; readonly message: string }[] => {
  const keptSince = now - (MIN_HISTORY_RETENTION_DAYS * DAY_MS - COUNT_WINDOW_MS);
  const byRef = new Map<string, RecordedStockChange[]>();
  for (const change of changes) byRef.set(change.ref, [...(byRef.get(change.ref) ?? []), change]);
  const violations: { rule: 'changes-recorded'; message: string }[] = [];
  for (const batch of batches) {
    const recorded = byRef.get(batch.ref) ?? [];
    const births = recorded.filter(({ kind }) => kind === 'added' || kind === 'transferred_in');
    if (births.length === 0 || Math.min(...births.map(({ at }) => Date.parse(at))) < keptSince) continue;
    const removed = recorded.filter(({ kind, delta }) => kind === 'transfer_cancelled' && delta < 0);
    if (removed.some(({ reference }) => !births.some((birth) => birth.kind === 'transferred_in' && birth.reference === reference))) continue;
    const sum = recorded.reduce((total, { delta }) => total + delta, 0);
    if (sum === batch.qty) continue;
    violations.push({
      rule: 'changes-recorded',
      message: `batch ${JSON.stringify(batch.ref)} of sku ${JSON.stringify(batch.sku)} has qty ${batch.qty}, and its ${recorded.length} changes recorded add up to ${sum}`,
    });
  }
  return violations;
};
