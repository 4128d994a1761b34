import { countTimeOf } from '../../domain/adjustments';
import type { DynamoDbBatchRepository } from '../../functions/store/batch-repository';

/*
 * Defects planted in the service on purpose, to show that the judge finds what it is meant to: each
 * changes what the repository of every function instance of a run answers, as a bug in the adapter
 * would. `npm run simulate -- --seconds N --plant NAME` explores with one planted (and `--seed S
 * --plant NAME` replays a run of it); no suite's seed and no kept run of the service plants any,
 * and test/unit/fixtures/planted-runs/ keeps a shrunk run of each, which the judge must still fail.
 */

const DEFECTS = {
  /** A count as of a moment past takes none of the changes since: what left or came after it is overwritten. */
  'count-ignores-changes-since': (repository: DynamoDbBatchRepository) => {
    const countBasis = repository.countBasis.bind(repository);
    repository.countBasis = async (ref, countedAt) => ({ ...(await countBasis(ref, countedAt)), changedSince: 0 });
  },
  /** A count taken at the very moment of the last count applied is refused as stale, as if taken before it. */
  'count-stale-at-the-same-moment': (repository: DynamoDbBatchRepository) => {
    const countBasis = repository.countBasis.bind(repository);
    repository.countBasis = async (ref, countedAt) => {
      const basis = await countBasis(ref, countedAt);
      return basis.lastCountedAt === countedAt ? { ...basis, lastCountedAt: new Date(Date.parse(countedAt) + 1).toISOString() } : basis;
    };
  },
  /**
   * A count's write is conditioned on the batch's changes as they are just before it, not as its read
   * of the changes found them: a change recorded in between, which leaves the batch as the count read
   * it (two that bring its qty back), is counted by neither.
   */
  'count-unguarded-by-its-read': (repository: DynamoDbBatchRepository) => {
    const changeBatch = repository.changeBatch.bind(repository);
    repository.changeBatch = async (batch, changed, ending, now, adjustment, changesRead) => {
      const countedAt = adjustment && countTimeOf(adjustment);
      const current = countedAt === undefined ? changesRead : (await repository.countBasis(batch.ref, countedAt)).changesRead;
      return changeBatch(batch, changed, ending, now, adjustment, current);
    };
  },
  /** A promise counts no unit of an expired hold as free, where the order gives them back before it plans. */
  'promise-ignores-expired-holds': (repository: DynamoDbBatchRepository) => {
    repository.expiredUnitsOn = async () => ({ units: 0, counted: { holds: [], records: 0 } });
  },
  /** A page of a history that ends before its last entry but answers a cursor past it: that entry is on no page. */
  'history-page-skips-its-last': (repository: DynamoDbBatchRepository) => {
    const stockHistory = repository.stockHistory.bind(repository);
    repository.stockHistory = async (sku, request) => {
      const page = await stockHistory(sku, request);
      return page.next && page.entries.length > 1 ? { ...page, entries: page.entries.slice(0, -1) } : page;
    };
  },
  /** A history whose entries say the qty of the batch as it is now, not as each change left it. */
  'history-qty-after-as-now': (repository: DynamoDbBatchRepository) => {
    const stockHistory = repository.stockHistory.bind(repository);
    repository.stockHistory = async (sku, request) => {
      const page = await stockHistory(sku, request);
      const entries = await Promise.all(page.entries.map(async (entry) => ({ ...entry, qtyAfter: (await repository.batch(entry.batchref, sku))?.qty ?? entry.qtyAfter })));
      return { ...page, entries };
    };
  },
  /** A count at a place is planned again by each send of its row, over the batches as the sends before it left them, its plan kept or not. */
  'place-count-planned-again': (repository: DynamoDbBatchRepository) => {
    const savePlaceCount = repository.savePlaceCount.bind(repository);
    repository.placeCount = async () => undefined;
    repository.savePlaceCount = async (importid, row, counts) => {
      await savePlaceCount(importid, row, counts);
      return counts;
    };
  },
} as const;

export type PlantedDefect = keyof typeof DEFECTS;
export const PLANTED_DEFECTS = Object.keys(DEFECTS) as PlantedDefect[];

export const isPlantedDefect = (name: string): name is PlantedDefect => (PLANTED_DEFECTS as string[]).includes(name);

/** The repository with `defect` planted in it, and in each it makes for a request's deadline; or as it is. */
export const planted = (defect: PlantedDefect | undefined, repository: DynamoDbBatchRepository): DynamoDbBatchRepository => {
  if (!defect) return repository;
  DEFECTS[defect](repository);
  const withDeadline = repository.withDeadline.bind(repository);
  repository.withDeadline = (...args) => planted(defect, withDeadline(...args));
  const forImportChunk = repository.forImportChunk.bind(repository);
  repository.forImportChunk = (claim) => planted(defect, forImportChunk(claim));
  return repository;
};
