import { AllocationContended, InvalidSku, LineAlreadyAllocated, OutOfStock } from './errors';
import { type Allocation, type NewBatch, type OrderLine, candidateBatches, isSameLine, newBatch } from './model';
import type { BatchRepository } from './ports';

export interface AllocationOutcome {
  readonly batchref: string;
  /** False when the line was already allocated with the same qty: a retry, answered without taking stock. */
  readonly created: boolean;
}

/**
 * Each lost race means another request took stock, so the loop ends in a save or "out of stock";
 * the bound only keeps one request from spinning under a storm of competitors.
 */
export const MAX_ALLOCATION_ROUNDS = 8;

export const addBatch = async (batch: NewBatch, repository: BatchRepository): Promise<void> => {
  await repository.addBatch(newBatch(batch));
};

export const allocate = async (line: OrderLine, repository: BatchRepository): Promise<AllocationOutcome> => {
  for (let round = 0; round < MAX_ALLOCATION_ROUNDS; round++) {
    const stock = await repository.stockOf(line.sku);
    if (!stock.known) throw new InvalidSku(line.sku);

    const candidates = candidateBatches(line, stock.batches);
    if (candidates.length === 0) {
      // The line may hold stock already: a retry whose first answer was lost after it committed.
      const existing = await repository.allocationOf(line.orderid, line.sku);
      if (existing) return answerRepeat(existing, line);
      throw new OutOfStock(line.sku);
    }

    for (const batch of candidates) {
      const allocation: Allocation = { ...line, batchref: batch.ref };
      const result = await repository.saveAllocation(allocation, batch);
      if (result.outcome === 'saved') return { batchref: batch.ref, created: true };
      if (result.outcome === 'line-exists') return answerRepeat(result.existing, line);
    }
  }
  throw new AllocationContended(line.sku, MAX_ALLOCATION_ROUNDS);
};

const answerRepeat = (existing: Allocation, line: OrderLine): AllocationOutcome => {
  if (!isSameLine(existing, line)) throw new LineAlreadyAllocated(line.orderid, line.sku, existing.qty);
  return { batchref: existing.batchref, created: false };
};
