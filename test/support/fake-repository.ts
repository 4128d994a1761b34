import { DuplicateBatch } from '../../domain/errors';
import type { Allocation, Batch } from '../../domain/model';
import type { BatchRepository, SaveAllocationResult, SkuStock } from '../../domain/ports';

/** The repository port in memory, with the same all-or-nothing answers as the DynamoDB adapter. */
export class FakeRepository implements BatchRepository {
  readonly batches = new Map<string, Batch>();
  readonly lines = new Map<string, Allocation>();

  async addBatch(batch: Batch): Promise<void> {
    if (this.batches.has(batch.ref)) throw new DuplicateBatch(batch.ref);
    this.batches.set(batch.ref, batch);
  }

  async stockOf(sku: string): Promise<SkuStock> {
    const batches = [...this.batches.values()].filter((batch) => batch.sku === sku);
    return { known: batches.length > 0, batches: batches.filter((batch) => batch.available > 0) };
  }

  async allocationOf(orderid: string, sku: string): Promise<Allocation | undefined> {
    return this.lines.get(lineKey(orderid, sku));
  }

  async saveAllocation(allocation: Allocation, { ref }: Batch): Promise<SaveAllocationResult> {
    const existing = this.lines.get(lineKey(allocation.orderid, allocation.sku));
    if (existing) return { outcome: 'line-exists', existing };
    const batch = this.batches.get(ref);
    if (!batch || batch.available < allocation.qty) return { outcome: 'batch-changed' };
    this.batches.set(batch.ref, { ...batch, available: batch.available - allocation.qty });
    this.lines.set(lineKey(allocation.orderid, allocation.sku), allocation);
    return { outcome: 'saved' };
  }

  /** Its calls answer at once: a deadline never passes in one. */
  withDeadline(): BatchRepository {
    return this;
  }
}

const lineKey = (orderid: string, sku: string) => JSON.stringify([orderid, sku]);
