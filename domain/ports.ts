import type { Allocation, Batch } from './model';

export type SaveAllocationResult =
  | { readonly outcome: 'saved' }
  /** The batch no longer has the quantity: another request took the stock first. Nothing was written. */
  | { readonly outcome: 'batch-short' }
  /** The (orderid, sku) line is already allocated. Nothing was written. */
  | { readonly outcome: 'line-exists'; readonly existing: Allocation };

/**
 * Where batches and allocated lines live. Each method is atomic, and the invariants (stock never
 * below zero, a batch reference exists once, a line is allocated once) are the repository's to
 * guard at the moment of writing, since a read made before the write can be stale by then.
 * Methods throw StoreUnavailable when the store cannot answer.
 */
export interface BatchRepository {
  /** Throws DuplicateBatch when a batch with this reference exists, whatever its SKU. */
  addBatch(batch: Batch): Promise<void>;
  /** Every batch of the SKU, as of now (a strongly consistent read), in no particular order. */
  batchesOf(sku: string): Promise<Batch[]>;
  allocationOf(orderid: string, sku: string): Promise<Allocation | undefined>;
  /** Takes `allocation.qty` from the batch and records the line, both or neither. */
  saveAllocation(allocation: Allocation): Promise<SaveAllocationResult>;
}
