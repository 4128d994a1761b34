/**
 * The one definition of the table's shape, shared by the DynamoDB adapter, the local server (which
 * creates the table when it is missing) and the CDK stack, so the three cannot drift apart.
 */
export const tableKeySchema = {
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'S' },
} as const;

/**
 * An allocated line's batch and when it was allocated, so that a batch
 * that shrinks finds its lines, newest first. Only lines carry these attributes (a sparse index).
 * Global, since an index local to the table's partitions would have to be made with the table; its
 * reads lag writes by a moment, which the batch's own stock count, always read from the table,
 * makes safe (domain/ports.ts, `linesOn`).
 */
export const linesByBatchIndex = {
  name: 'linesByBatch',
  partitionKey: { name: 'lineBatch', type: 'S' },
  sortKey: { name: 'allocatedAt', type: 'S' },
} as const;

/**
 * Active holds by when they expire, for the sweeper: a hold's record carries the partition key
 * while it is active (a sparse index: ending the hold removes it), spread over a few shards so that
 * no one index partition takes every hold's writes; `heldUntil` moves with an extension.
 */
export const activeHoldsIndex = {
  name: 'activeHolds',
  partitionKey: { name: 'activeHoldShard', type: 'S' },
  sortKey: { name: 'heldUntil', type: 'S' },
  shards: 4,
} as const;

/**
 * Each SKU's changes of on-hand stock by their moment, newest first, for its history
 * (functions/store/stock-changes.ts): only the records of those changes carry the partition key (a
 * sparse index), written in each change's own transaction. Its reads lag the writes by a moment.
 */
export const stockHistoryIndex = {
  name: 'stockHistory',
  partitionKey: { name: 'historyOf', type: 'S' },
  sortKey: { name: 'at', type: 'S' },
} as const;

/**
 * The lists of SKUs, for the listings (functions/store/sku-lists.ts): every SKU's known-SKU item is
 * in the list of all SKUs, and an item beside it for each location a batch of it was at is in that
 * location's list (a sparse index: no other item carries the partition key). Each list is spread
 * over a few shards by SKU, so that a feed of new SKUs does not write one index partition alone;
 * a list is read shard after shard, each sorted by SKU. Keys only: a page reads each SKU's stock
 * from the table. Its reads lag the writes by a moment.
 */
export const skuListsIndex = {
  name: 'skuLists',
  partitionKey: { name: 'listedIn', type: 'S' },
  sortKey: { name: 'sku', type: 'S' },
  shards: 4,
} as const;

/**
 * The table's stream carries each item as it was and as it became, for the stream consumer
 * (functions/publish-events.ts) and the local server to turn committed changes into events.
 */
export const tableStreamViewType = 'NEW_AND_OLD_IMAGES' as const;

/**
 * Items that exist only to put an event on the stream (a deallocation's reason, a refusal for lack
 * of stock) carry this attribute, epoch seconds, and DynamoDB's time to live deletes them after it.
 */
export const timeToLiveAttribute = 'expiresAt';

/**
 * What each kind of item's partition key starts with. The adapter builds every key from these, and
 * the stack grants each function only the prefixes of the items it touches (IAM's
 * `dynamodb:LeadingKeys`), so a key layout and its permissions change together.
 */
export const partitionKeyPrefix = {
  /** A SKU's batches, the item that says the SKU is known, and the records of the holds' units taken from its batches' own units. */
  sku: 'SKU#',
  /** The item that keeps a batch reference unique across SKUs. */
  batchReference: 'BATCHREF#',
  /** An order's allocated lines. */
  order: 'ORDER#',
  /** A hold's record: its lines, its status, until when it holds. */
  hold: 'HOLD#',
  /** A batch's lines, in the index: `LINES<shard>#<ref>`, and `LINES#<ref>` for lines written before it was sharded. */
  linesOfBatch: 'LINES',
  /** A share of a hot SKU's batch's stock (a piece), in one of a few partitions of its SKU's pieces, and the records of the holds' units taken from it. */
  piece: 'PIECES#',
  /** A shard of the active holds, in their index. */
  activeHolds: 'ACTIVEHOLDS#',
  /** The one partition of every location: its whole key, as well as its prefix. */
  locations: 'LOCATIONS',
  /** A transfer's record: what it moved, from which batch, and whether it was cancelled. */
  transfer: 'TRANSFER#',
  /** A shipment's record: the units of an order's lines that left, and the batches they left. */
  shipment: 'SHIPMENT#',
  /** An adjustment's record: a change of a batch's units on hand, its reason, the qty before and after. */
  adjustment: 'ADJUSTMENT#',
  /** An import's record, and its chunks' records and errors. */
  import: 'IMPORT#',
  /** A SKU's changes of stock, in the history's index: `HISTORY#<sku>`. */
  history: 'HISTORY#',
  /** A shard of the list of every SKU, in the lists' index: `SKUS#<shard>`. */
  allSkus: 'SKUS#',
  /** A shard of the list of a location's SKUs, in the lists' index: `PLACE#<location>#<shard>`. */
  locationSkus: 'PLACE#',
} as const;

const keyAttributes = [tableKeySchema.partitionKey.name, tableKeySchema.sortKey.name];
const batchAttributes = ['type', 'ref', 'sku', 'qty', 'available', 'eta', 'heldUnits', 'changedAt', 'pieces', 'spreadId', 'spreadAt', 'piece', 'takenAt', 'givenBack', 'location', 'heldFrom', 'heldTakes'];
/** A location's item, besides the `type` and `changedAt` a batch's have too (functions/store/locations.ts). */
const locationAttributes = ['id', 'name', 'priority', 'serves', 'active', 'position', 'handlingDays', 'transitDays', 'revision'];
/**
 * A line's; `routing` what its request named (functions/store/routing-fields.ts), which a hold's record
 * names too; `split` and `parts` a split line's, which its notice names too (functions/store/lines.ts).
 */
const lineAttributes = ['orderid', 'batchref', linesByBatchIndex.partitionKey.name, linesByBatchIndex.sortKey.name, 'movedAt', 'routing', 'split', 'parts', 'shipped', 'cancelledAt'];
/** A hold's record, besides the `orderid` and `routing` a line names too and the time to live a notice has too. */
const holdAttributes = ['holdid', 'lines', 'status', 'heldUntil', 'placedAt', 'extendedAt', 'endedAt', activeHoldsIndex.partitionKey.name];
/** A transfer's record, besides what a batch or a hold's record names too, and the mark on its incoming batch's reference (functions/store/transfers.ts). */
const transferAttributes = ['transferid', 'fromLocation', 'toLocation', 'fromBatchref', 'createdAt', 'cancelledAt', 'incomingOf'];
/** A shipment's record, besides the `orderid`, `lines` and `location` a line, a hold or a batch names too (functions/store/shipments.ts). */
const shipmentAttributes = ['shipmentid', 'shippedAt'];
/**
 * A batch reference's reason for its last change and its last count's time (functions/store/batches.ts),
 * an adjustment's record (functions/store/adjustments.ts), and a change's (functions/store/stock-changes.ts).
 */
const adjustmentAttributes = ['changeReason', 'countedAt', 'changes', 'adjustmentid', 'delta', 'expectedQty', 'note', 'before', 'after', 'adjustedAt', 'reference', 'at'];
/** Who made a change (on a change's record, a batch's reference and a shipment's), and what a change's record says besides for the history (functions/store/stock-changes.ts). */
const historyAttributes = ['actor', 'kind', 'qtyAfter', stockHistoryIndex.partitionKey.name];
/** The list a known-SKU item or a SKU's item at a location is in (functions/store/sku-lists.ts). */
const listAttributes = [skuListsIndex.partitionKey.name];
/** The import row a batch's reference names as the one that added it (functions/store/batches.ts), an import's record, its chunks' records, claims and errors, and its plans of counts at a place (functions/store/imports.ts), besides the `status` and time to live others name too. */
const importAttributes = ['addedBy', 'importid', 'dryRun', 'validateFirst', 'feed', 'digest', 'file', 'fileRefusal', 'refused', 'rows', 'startedAt', 'total', 'done', 'applied', 'unchanged', 'conflicted', 'stale', 'invalid', 'failed', 'finishedAt', 'outcomes', 'errors', 'claimid', 'recorded', 'counts'];
/** A record of a hold's units on a batch, besides what a batch, a piece or a hold's record names too (functions/store/held-units.ts). */
const heldUnitsAttributes = ['sourceQty', 'sources'];
/** A deallocation's or a refusal's notice, written for its event (functions/store/lines.ts). */
const noticeAttributes = ['noticeId', 'reason', 'deallocatedAt', 'refusedAt', 'destination', timeToLiveAttribute];
/**
 * What each handler may do to the table: its read and write actions, the partition key prefixes of
 * the items it reads and of those it writes (and of the index entries it queries), and the
 * attributes its writes name. The stack turns this into each role's policy, and a test checks every
 * call the adapter sends for each handler against it.
 */
export interface TableAccess {
  readonly reads: readonly string[];
  readonly writes: readonly string[];
  readonly readPartitionKeyPrefixes: readonly string[];
  readonly writtenPartitionKeyPrefixes: readonly string[];
  readonly writtenAttributes: readonly string[];
  /** The indexes it queries, each on these partition key prefixes of the index's own keys. */
  readonly indexQueries: readonly { readonly index: string; readonly partitionKeyPrefixes: readonly string[] }[];
}

const READS = ['dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:BatchGetItem'];
// A transaction is authorized action by action, so it needs no action of its own.
const WRITES = ['dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem'];

/** The allocations handler's items: the SKU's stock, its batches and their pieces, the order's lines, the holds. */
const allocationsItems = [partitionKeyPrefix.sku, partitionKeyPrefix.piece, partitionKeyPrefix.order, partitionKeyPrefix.hold];
/** The batches handler's items: the allocations handler's, the batch references, the locations, the transfers, the shipments and the adjustments. */
const batchesItems = [
  partitionKeyPrefix.sku,
  partitionKeyPrefix.piece,
  partitionKeyPrefix.batchReference,
  partitionKeyPrefix.order,
  partitionKeyPrefix.hold,
  partitionKeyPrefix.locations,
  partitionKeyPrefix.transfer,
  partitionKeyPrefix.shipment,
  partitionKeyPrefix.adjustment,
  partitionKeyPrefix.import,
];

/**
 * Built when read: the bundles of the handlers, which never read it, leave it out (esbuild keeps a
 * top-level array built by spreading others, which it cannot prove free of effects).
 */
export const tableAccess = /* @__PURE__ */ (() => {
  /**
   * What ending a hold names in its writes (functions/store/holds.ts: holdEndWrite on the hold's
   * record; held-units.ts: givingBackWrites on its units' records and the items that count them): the
   * keys; an item's stock, its count of held units and the spread its condition compares; the record's
   * status, the expiry its condition compares, when it ended, its time to live, and its key in the
   * active holds' index, which the write removes.
   */
  const holdEndingAttributes = [
    ...keyAttributes,
    'available',
    'heldUnits',
    'givenBack',
    'spreadId',
    'pieces',
    'status',
    'heldUntil',
    'endedAt',
    timeToLiveAttribute,
    activeHoldsIndex.partitionKey.name,
  ];

  return {
    // POST /allocate, GET /allocations/{orderid}, DELETE /allocations/{orderid}/{sku}, the holds'
    // routes: the SKU's stock, its batches and their pieces, the order's lines, the holds; never a
    // batch reference. It reads the locations, to route lines by them, and never writes one.
    allocations: {
      reads: READS,
      writes: WRITES,
      readPartitionKeyPrefixes: [...allocationsItems, partitionKeyPrefix.locations],
      writtenPartitionKeyPrefixes: allocationsItems,
      writtenAttributes: [...keyAttributes, ...batchAttributes, ...lineAttributes, ...noticeAttributes, ...holdAttributes, ...heldUnitsAttributes],
      indexQueries: [],
    },
    // POST /add_batch, GET and PATCH /batches/{ref}, GET /skus/{sku}/stock: batches and their
    // references, and the lines a shrinking batch moves (found through the index) and the holds it ends;
    // the locations' routes, and the check a new batch's transaction makes that its location exists
    // (ConditionCheckItem: a read of the item's existence, which writes nothing); the transfers, their
    // records and the batches they take from, add and remove; the shipments, their records, and the
    // lines and batches whose units they ship; the SKUs' histories and the lists of SKUs, in their indexes.
    batches: {
      reads: [...READS, 'dynamodb:ConditionCheckItem'],
      writes: WRITES,
      readPartitionKeyPrefixes: batchesItems,
      writtenPartitionKeyPrefixes: batchesItems,
      writtenAttributes: [
        ...keyAttributes,
        ...batchAttributes,
        ...lineAttributes,
        ...noticeAttributes,
        ...holdAttributes,
        ...heldUnitsAttributes,
        ...locationAttributes,
        ...transferAttributes,
        ...shipmentAttributes,
        ...adjustmentAttributes,
        ...historyAttributes,
        ...listAttributes,
        ...importAttributes,
      ],
      indexQueries: [
        { index: linesByBatchIndex.name, partitionKeyPrefixes: [partitionKeyPrefix.linesOfBatch] },
        { index: stockHistoryIndex.name, partitionKeyPrefixes: [partitionKeyPrefix.history] },
        { index: skuListsIndex.name, partitionKeyPrefixes: [partitionKeyPrefix.allSkus, partitionKeyPrefix.locationSkus] },
      ],
    },
    // The hold sweeper: the active holds' index, the holds it ends, their units' records, which it
    // deletes, and the items it gives their units back to (a batch's own, or a piece); never an
    // order's line or a batch reference.
    sweeper: {
      reads: READS,
      writes: ['dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
      readPartitionKeyPrefixes: [partitionKeyPrefix.sku, partitionKeyPrefix.piece, partitionKeyPrefix.hold],
      writtenPartitionKeyPrefixes: [partitionKeyPrefix.sku, partitionKeyPrefix.piece, partitionKeyPrefix.hold],
      writtenAttributes: holdEndingAttributes,
      indexQueries: [{ index: activeHoldsIndex.name, partitionKeyPrefixes: [partitionKeyPrefix.activeHolds] }],
    },
  } as const satisfies Record<string, TableAccess>;
})();

/** The table name the local server and tests use when `TABLE_NAME` is not set. */
const defaultLocalTableName = 'allocations';

export const tableNameFromEnv = (): string => process.env.TABLE_NAME ?? defaultLocalTableName;
