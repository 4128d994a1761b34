import { COUNT_WINDOW_MS } from '../domain/adjustments';
import type { Instant } from '../domain/holds';
import type { Batch } from '../domain/model';
import { type StockChange, retentionDays } from '../functions/store/stock-changes';

const DAY_MS = 24 * 60 * 60 * 1_000;

/**
 * `npm run check`'s rule `changes-recorded`: every change of a batch's qty is recorded, once, in its
 * own write (docs/api.md, "History"), so a batch's changes add up to its qty (those of a transfer's
 * incoming batch cancelled under the same ref add up to none). Held only of a batch whose every
 * change is still kept: its first (a batch added, or a transfer's incoming batch) is there, and
 * recent enough that none after it can have expired (a count may be dated COUNT_WINDOW_MS before
 * the batch came, and each record is kept the history's retention from its moment).
 */
export const changesRecorded = (batches: readonly Batch[], changes: readonly StockChange[], now: Instant): { readonly rule: 'changes-recorded'; readonly message: string }[] => {
  const keptSince = now - (retentionDays() * DAY_MS - COUNT_WINDOW_MS);
  const byRef = new Map<string, StockChange[]>();
  for (const change of changes) byRef.set(change.ref, [...(byRef.get(change.ref) ?? []), change]);
  const violations: { rule: 'changes-recorded'; message: string }[] = [];
  for (const batch of batches) {
    const recorded = byRef.get(batch.ref) ?? [];
    const births = recorded.filter(({ kind }) => kind === 'added' || kind === 'transferred_in').map(({ at }) => Date.parse(at));
    if (births.length === 0 || Math.min(...births) < keptSince) continue;
    const sum = recorded.reduce((total, { delta }) => total + delta, 0);
    if (sum === batch.qty) continue;
    violations.push({
      rule: 'changes-recorded',
      message: `batch ${JSON.stringify(batch.ref)} of sku ${JSON.stringify(batch.sku)} has qty ${batch.qty}, and its ${recorded.length} changes recorded add up to ${sum}`,
    });
  }
  return violations;
};
