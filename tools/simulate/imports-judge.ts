import type { Adjustment } from '../../domain/adjustments';
import { ROW_OUTCOMES, type ImportRecord, type RowOutcome, rowChangeId } from '../../domain/imports';
import { batchCountId } from '../../domain/place-count-services';
import { type StoredImportItem, importCheckKey, importChunkKey, placeCountKey } from '../../functions/store/imports';
import type { Failure } from './judge';
import { type Reached, keyText } from './observed';

/*
 * Imports (docs/api.md, "Imports") held against what the run left in the table: the workers that
 * ran them crashed and were sent again among the run's faults. Each check and each chunk of an
 * import is written by one commit, however often its rows ran; the import's counts are its chunks'
 * outcomes and its checks' rows, each counted once; one completed has every row done; a row
 * whose change was made (the batch it added, the count it made, a count of a batch it made as a
 * count at a place) is counted applied by its chunk, once, whichever send of it made the change;
 * and a count at a place is planned once, its counts of batches made as its plan says.
 */

export interface StoredImports {
  readonly items: readonly StoredImportItem[];
  readonly adjustments: readonly Adjustment[];
  /** The batch references' `addedBy`: the import rows that added a batch. */
  readonly addedBy: readonly string[];
}

export const judgeImports = (reached: readonly Reached[], { items, adjustments, addedBy }: StoredImports): Failure[] => {
  const failures: Failure[] = [];
  const commits = reached.filter(({ committed }) => committed);
  const writtenBy = (key: Record<string, unknown>) => commits.filter(({ items: written }) => written.includes(keyText(key))).length;
  const records = items.flatMap((item) => (item.kind === 'import' ? [item.record] : []));
  const changes = new Set([...adjustments.map(({ adjustmentid }) => adjustmentid), ...addedBy]);
  const importids = new Set(records.map(({ importid }) => importid));
  failures.push(...judgePlaceCounts(items, adjustments, importids, writtenBy));
  const countedAtPlaces = new Set(adjustments.flatMap((adjustment) => placeRowOf(adjustment, importids) ?? []));
  for (const record of records) {
    const { importid, counts } = record;
    const checks = items.flatMap((item) => (item.kind === 'import-check' && item.importid === importid ? [item] : []));
    const chunks = items.flatMap((item) => (item.kind === 'import-chunk' && item.importid === importid ? [item] : []));
    for (const check of checks) {
      const commitsOfIt = writtenBy(importCheckKey(importid, check.firstRow));
      if (commitsOfIt !== 1) failures.push({ rule: 'import-step-once', message: `import ${importid}'s check from row ${check.firstRow} was written by ${commitsOfIt} commits` });
    }
    const outcomes: RowOutcome[] = [];
    for (const chunk of chunks) {
      const commitsOfIt = writtenBy(importChunkKey(importid, chunk.firstRow));
      if (commitsOfIt !== 1) failures.push({ rule: 'import-step-once', message: `import ${importid}'s chunk from row ${chunk.firstRow} was written by ${commitsOfIt} commits` });
      outcomes.push(...chunk.outcomes);
      chunk.outcomes.forEach((outcome, index) => {
        const row = chunk.firstRow + index;
        const made = changes.has(rowChangeId(importid, row)) || countedAtPlaces.has(rowChangeId(importid, row));
        if (made && outcome !== 'applied') failures.push({ rule: 'import-row-once', message: `import ${importid}'s row ${row} made its change, and its chunk counts it ${outcome}` });
      });
    }
    failures.push(...countsAgainst(record, checks.reduce((sum, { rows }) => sum + rows, 0), outcomes));
  }
  return failures;
};

/** The record's counts against its checks' rows and its chunks' outcomes: each counted once, and a completed import whole. */
const countsAgainst = ({ importid, status, counts }: ImportRecord, checkedRows: number, outcomes: readonly RowOutcome[]): Failure[] => {
  const failures: Failure[] = [];
  const counted = (outcome: RowOutcome) => outcomes.filter((one) => one === outcome).length;
  const wrong = ROW_OUTCOMES.filter((outcome) => counts[outcome] !== counted(outcome) && !(status === 'failed' && outcome === 'invalid'));
  if (counts.done !== outcomes.length || wrong.length > 0 || counts.total !== checkedRows) {
    failures.push({
      rule: 'import-counted-once',
      message: `import ${importid} counts ${JSON.stringify(counts)}, where its checks hold ${checkedRows} rows and its chunks ${outcomes.length} outcomes (${ROW_OUTCOMES.map((outcome) => `${counted(outcome)} ${outcome}`).join(', ')})`,
    });
  }
  if (status === 'completed' && counts.done !== counts.total) failures.push({ rule: 'import-completed-whole', message: `import ${importid} is completed with ${counts.done} of ${counts.total} rows done` });
  return failures;
};

/** The change id of the import row whose count at a place made the adjustment (`<importid>#<row>#<ref>`), if one did. */
const placeRowOf = ({ adjustmentid, ref }: Adjustment, importids: ReadonlySet<string>): string | undefined => {
  if (!adjustmentid.endsWith(`#${ref}`)) return undefined;
  const changeId = adjustmentid.slice(0, -ref.length - 1);
  const [, importid, row] = /^(.*)#(\d+)$/.exec(changeId) ?? [];
  return importid !== undefined && importids.has(importid) && row !== undefined && rowChangeId(importid, Number(row)) === changeId ? changeId : undefined;
};

/**
 * Counts at a place: each row's plan written by one commit, and every count of a batch made under
 * the row's id one its plan names, with the qty the plan gives it; none without a plan.
 */
const judgePlaceCounts = (items: readonly StoredImportItem[], adjustments: readonly Adjustment[], importids: ReadonlySet<string>, writtenBy: (key: Record<string, unknown>) => number): Failure[] => {
  const failures: Failure[] = [];
  const plans = items.flatMap((item) => (item.kind === 'import-place-count' ? [item] : []));
  const planned = new Map<string, { readonly ref: string; readonly qty: number }>();
  for (const { importid, row, counts } of plans) {
    const commitsOfIt = writtenBy(placeCountKey(importid, row));
    if (commitsOfIt !== 1) failures.push({ rule: 'import-step-once', message: `import ${importid}'s count at a place in row ${row} was planned by ${commitsOfIt} commits` });
    for (const count of counts) planned.set(batchCountId(rowChangeId(importid, row), count.ref), count);
  }
  for (const adjustment of adjustments) {
    const { adjustmentid, ref, qty } = adjustment;
    const plannedCount = planned.get(adjustmentid);
    if (plannedCount ? plannedCount.ref !== ref || plannedCount.qty !== qty : placeRowOf(adjustment, importids) !== undefined) {
      failures.push({ rule: 'place-count-as-planned', message: `count ${adjustmentid} of ${ref} to ${String(qty)} is not its row's plan${plannedCount ? `, which counts ${plannedCount.ref} ${plannedCount.qty}` : ', which has none'}` });
    }
  }
  return failures;
};
