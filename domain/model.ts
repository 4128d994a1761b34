/** A customer's request for some quantity of one product. An order holds at most one line per SKU. */
export interface OrderLine {
  readonly orderid: string;
  readonly sku: string;
  readonly qty: number;
}

/**
 * Stock of one product: on the shelf when `eta` is null, otherwise a shipment due on `eta`
 * (a calendar date, `YYYY-MM-DD`, so dates compare as strings).
 */
export interface Batch {
  readonly ref: string;
  readonly sku: string;
  readonly qty: number;
  readonly available: number;
  readonly eta: string | null;
}

/** An order line placed into a batch. */
export interface Allocation extends OrderLine {
  readonly batchref: string;
}

export interface NewBatch {
  readonly ref: string;
  readonly sku: string;
  readonly qty: number;
  readonly eta: string | null;
}

export const newBatch = ({ ref, sku, qty, eta }: NewBatch): Batch => ({ ref, sku, qty, available: qty, eta });

/** A line goes whole into one batch: a batch with too little left is skipped, never partly used. */
export const canAllocate = (batch: Batch, line: OrderLine): boolean =>
  batch.sku === line.sku && batch.available >= line.qty;

/**
 * In-stock batches before shipments, then the earliest shipment; the reference breaks ties so the
 * choice never depends on the order in which storage returns batches.
 */
export const byPreference = (a: Batch, b: Batch): number => {
  if (a.eta !== b.eta) {
    if (a.eta === null) return -1;
    if (b.eta === null) return 1;
    return a.eta < b.eta ? -1 : 1;
  }
  return a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0;
};

/** The batches that could take the whole line, best first. */
export const candidateBatches = (line: OrderLine, batches: readonly Batch[]): Batch[] =>
  batches.filter((batch) => canAllocate(batch, line)).sort(byPreference);

export const isSameLine = (allocation: Allocation, line: OrderLine): boolean =>
  allocation.orderid === line.orderid && allocation.sku === line.sku && allocation.qty === line.qty;
