import { type Instant } from '../../domain/holds';
import { DEFAULT_LOCATION_ID } from '../../domain/locations';
import { CHANGE_REASONS, type ChangeReason } from '../../domain/adjustments';
import { type Batch, hasStockLeft, heldOf, locationOf } from '../../domain/model';
import { type Condition, ITEM_IS_NEW, and, withValues } from './conditions';
import { PK, isAt, isNumber, isText, itemKey } from './fields';
import { LISTED_IN, listedIn } from './sku-lists';
import type { TransactWriteItem } from './store-calls';
import { partitionKeyPrefix } from './table';
import { heldBoundFields, parseHeldBound, heldBoundKept, heldTakesAre } from './held-bounds';


/*
 * Batches (items.ts, "The table's items"): a batch's item, at one of its two keys in its SKU's
 * partition as it has stock left or not; the known-SKU item its SKU's batches write; and its
 * reference, which makes a ref unique across SKUs and describes the batch for its events. Their keys,
 * items and parser, the conditions that guard a batch's copy, and the writes of a batch kept whole.
 * A spread batch's item is read here too (it names its spread), but its writes are pieces.ts's, and
 * writesOf there picks one or the other: nothing here writes or reads a piece.
 */

/** The sort keys of a SKU's partition that an allocation reads: the known-SKU item and batches with stock. */
export const STOCK_RANGE = 'STOCK';

export const skuPartition = (sku: string) => `${partitionKeyPrefix.sku}${sku}`;
export const knownSkuKey = (sku: string) => itemKey(skuPartition(sku), STOCK_RANGE);
export const batchWithStockKey = (sku: string, ref: string) => itemKey(skuPartition(sku), `${STOCK_RANGE}#${ref}`);
/** The sort keys of a SKU's partition that hold its batches with no stock left: read only for the stock levels' units on hand. */
export const EXHAUSTED_RANGE = 'EMPTY#';
export const exhaustedBatchKey = (sku: string, ref: string) => itemKey(skuPartition(sku), `${EXHAUSTED_RANGE}${ref}`);
/** Where a batch lives: in the SKU's stock range while it has stock or is spread, out of it once it has none. */
export const batchKey = (batch: Batch) =>
  batch.pieces !== undefined || hasStockLeft(batch) ? batchWithStockKey(batch.sku, batch.ref) : exhaustedBatchKey(batch.sku, batch.ref);

export const batchReferenceKey = (ref: string) => itemKey(`${partitionKeyPrefix.batchReference}${ref}`, 'BATCHREF');

/**
 * A batch's location as its items hold it: absent for `default`, as on every item written before
 * there were locations, so that those need no migration and read as at `default`.
 */
export const locationField = ({ location }: Pick<Batch, 'location'>) => (location === undefined || location === DEFAULT_LOCATION_ID ? {} : { location });

/** A batch as the table holds it. */
export const batchItem = (batch: Batch) => {
  const { ref, sku, qty, available, eta, held = 0, heldFrom, heldTakes } = batch;
  return {
    ...batchKey(batch),
    type: 'Batch',
    ref,
    sku,
    qty,
    available,
    ...(eta === null ? {} : { eta }),
    ...(held > 0 ? { heldUnits: held } : {}),
    ...heldBoundFields({ heldFrom, heldTakes }),
    ...locationField(batch),
  };
};

/** In the list of every SKU (sku-lists.ts). */
const knownSkuItem = (sku: string) => ({ ...knownSkuKey(sku), type: 'Sku', sku, [LISTED_IN]: listedIn({ kind: 'all' }, sku) });

/** The sort keys of a SKU's partition that say where its batches were: one for each location, out of the stock range. */
const AT_LOCATION_RANGE = 'PLACE#';
export const skuAtLocationKey = (sku: string, location: string) => itemKey(skuPartition(sku), `${AT_LOCATION_RANGE}${location}`);
/** That a batch of the SKU was at the location, in that location's list of SKUs (sku-lists.ts): `default` is named, as every other. */
const skuAtLocationItem = (sku: string, location: string) => ({ ...skuAtLocationKey(sku, location), type: 'SkuAtLocation', sku, location, [LISTED_IN]: listedIn({ kind: 'location', location }, sku) });

/** The attribute of a batch reference that names its last change's reason, for its BatchChanged (ChangeReason). */
export const CHANGE_REASON = 'changeReason';

/** What a batch reference says of its batch, as of the batch's last change: `changedAt`. */
export interface BatchDescription {
  readonly qty: number;
  readonly eta: string | null;
  /** Absent: `default`, as for the batch itself. */
  readonly location?: string;
  readonly changedAt: string;
  /** Absent on a batch not changed since it was added, and on references written before changes recorded it. */
  readonly reason?: ChangeReason;
  /** Who made the last change (domain/stock-history.ts); absent on references written before changes recorded it. */
  readonly actor?: string;
}

/** The attribute of a batch reference, a change's record and a shipment's record that names who made it. */
export const ACTOR = 'actor';

/** A batch reference's copy of its batch's qty, eta and location as of `changedAt`, for the batch's events. */
const batchDescription = (batch: Batch, changedAt: Instant, actor: string) => ({
  qty: batch.qty,
  ...(batch.eta === null ? {} : { eta: batch.eta }),
  ...locationField(batch),
  changedAt: new Date(changedAt).toISOString(),
  [ACTOR]: actor,
});

/** What the Query of a SKU's stock range reads, for a stub store to answer as the table would. */
export const stockRangeItems = (sku: string, batches: readonly Batch[]) => [knownSkuItem(sku), ...batches.map(batchItem)];

/** A spread batch's mark on its item: which spread it is, of how many pieces, since when. */
export interface Spread {
  readonly spreadId: string;
  readonly pieces: number;
  readonly spreadAt: string;
}

/** A batch's item, its SKU's known-SKU item or its reference, as read back. */
export type StoredBatchItem =
  /**
   * `inStockRange`: where it is stored, which should be where it has stock (the invariant check
   * compares them). A spread batch's `available` is its item's own, without its pieces'.
   */
  | { readonly kind: 'batch'; readonly batch: Batch; readonly inStockRange: boolean; readonly spread?: Spread }
  | { readonly kind: 'known-sku'; readonly sku: string }
  | { readonly kind: 'sku-at-location'; readonly sku: string; readonly location: string }
  /** `qty`, `eta` and `changedAt` are absent from references written before the batch's events existed. */
  | { readonly kind: 'batch-reference'; readonly ref: string; readonly sku: string; readonly description?: BatchDescription };

/**
 * A batch's item, its SKU's known-SKU item or its reference, read back through the keys that wrote
 * them: an item is a batch only if its key is one of the two keys of a batch of its sku and ref.
 */
export const parseBatchItem = (item: Record<string, unknown>): StoredBatchItem | undefined => {
  const { ref, sku, qty, available, eta, heldUnits, pieces, spreadId, spreadAt, changedAt, location } = item;
  const bound = parseHeldBound(item);
  if (isText(ref) && isText(sku) && (location === undefined || isText(location))) {
    // A `held` attribute is a map of holds written before held units were records of their own: an
    // empty one (what giving back its last entry left) holds nothing, any other is not read.
    const counted = heldUnits === undefined || (isNumber(heldUnits) && heldUnits >= 0);
    const noOldHolds = item.held === undefined || (typeof item.held === 'object' && item.held !== null && Object.keys(item.held).length === 0);
    if (isNumber(qty) && isNumber(available) && (eta === undefined || isText(eta)) && counted && noOldHolds && bound) {
      const batch: Batch = {
        ref,
        sku,
        qty,
        available,
        eta: eta ?? null,
        ...(isNumber(heldUnits) && heldUnits > 0 ? { held: heldUnits } : {}),
        ...bound,
        ...locationField({ location }),
      };
      const inStockRange = isAt(item, batchWithStockKey(sku, ref));
      const spread = isNumber(pieces) && isText(spreadId) && isText(spreadAt) ? { spread: { pieces, spreadId, spreadAt } } : {};
      const wholeOrSpread = pieces === undefined || 'spread' in spread;
      if (wholeOrSpread && (inStockRange || isAt(item, exhaustedBatchKey(sku, ref)))) return { kind: 'batch', batch, inStockRange, ...spread };
    }
    if (isAt(item, batchReferenceKey(ref))) {
      const reason = item[CHANGE_REASON];
      const actor = item[ACTOR];
      const described =
        isNumber(qty) && (eta === undefined || isText(eta)) && isText(changedAt) && (reason === undefined || CHANGE_REASONS.includes(reason as ChangeReason)) && (actor === undefined || isText(actor));
      return {
        kind: 'batch-reference',
        ref,
        sku,
        ...(described
          ? { description: { qty, eta: eta ?? null, ...locationField({ location }), changedAt, ...(reason === undefined ? {} : { reason: reason as ChangeReason }), ...(actor === undefined ? {} : { actor }) } }
          : {}),
      };
    }
  }
  if (isText(sku) && isAt(item, knownSkuKey(sku))) return { kind: 'known-sku', sku };
  if (isText(sku) && isText(location) && isAt(item, skuAtLocationKey(sku, location))) return { kind: 'sku-at-location', sku, location };
  return undefined;
};

/** An item's count of held units is `held`: absent counts none. */
export const heldUnitsAre = (held: number): Condition =>
  held === 0
    ? { ConditionExpression: '(attribute_not_exists(heldUnits) OR heldUnits = :noneHeld)', ExpressionAttributeValues: { ':noneHeld': 0 } }
    : { ConditionExpression: 'heldUnits = :heldUnits', ExpressionAttributeValues: { ':heldUnits': held } };

/** The fields a batch's copy is made of, as read: its units, qty, eta, held units and the count of takes that kept its bound. */
export const batchFieldsAre = ({ qty, available, eta, held = 0, heldTakes }: Batch) =>
  and(
    {
      ConditionExpression: `available = :available AND qty = :qty AND ${eta === null ? 'attribute_not_exists(eta)' : 'eta = :eta'}`,
      ExpressionAttributeValues: { ':available': available, ':qty': qty, ...(eta === null ? {} : { ':eta': eta }) },
    },
    heldUnitsAre(held),
    heldTakesAre(heldTakes),
  );

/**
 * A batch's key says whether it has stock left, so a change of `available` that crosses that line
 * moves the item: delete it where it is, on condition that it is exactly as read (so the copy is
 * exact), and put it at its other key. The put's condition cannot fail while the delete's holds: one
 * batch never has both keys. A condition cannot compare with NULL everywhere, hence an absent `eta`
 * for a batch in stock. Only a batch kept whole is moved, and the condition says so: one spread
 * since it was read has units in pieces that a copy without its spread would strand, whatever its
 * own `available` has come back to.
 */
const batchIsExactly = (batch: Batch) => and(batchFieldsAre(batch), { ConditionExpression: 'attribute_not_exists(pieces)', ExpressionAttributeValues: {} });

/**
 * A change of `available` by `delta` (and of its held units by `heldDelta`) made in place, on a batch
 * stored as read, on condition that the result stays on the side of the stock range the batch was
 * read on (which guards "stock never goes below zero" and "the stock range holds exactly the batches
 * with stock left"). Units held on the batch keep it in the range at `available` 0: the count is named
 * only where it decides the side, so that holds placed and ended meanwhile do not fail the write. A
 * condition cannot do arithmetic, hence the bounds against `-delta` and `-heldDelta`.
 */
export const staysOnItsSide = (stored: Batch, delta: number, heldDelta = 0): Condition => {
  const bound = (comparison: string) => ({ ConditionExpression: `available ${comparison} :bound`, ExpressionAttributeValues: { ':bound': -delta } });
  if (!hasStockLeft(stored)) return and(bound('<='), heldUnitsAre(0));
  if (stored.available + delta > 0 || heldOf(stored) + heldDelta === 0) return bound('>');
  // Left at 0 available: in the range by the units this write sets aside, or by those held on it.
  if (heldDelta > 0) return bound('>=');
  return and(bound('>='), { ConditionExpression: 'heldUnits > :heldFloor', ExpressionAttributeValues: { ':heldFloor': -heldDelta } });
};

/**
 * What a batch's reference says of it as long as no write has changed the batch since it was made:
 * `incomingOf`, the transfer whose incoming batch it is (transfers.ts). Every change of the batch's
 * description removes it (batchDescriptionWrite, and a transfer's take from the batch), and nothing
 * writes it again: "not changed since it was made" stays false once it is, whatever a later change
 * restores.
 */
export const INCOMING_OF = 'incomingOf';

/**
 * The attribute of a batch's reference that names the import row that added the batch (its change
 * id: domain/imports.ts), kept as long as the reference: a row applied again finds it and knows
 * that it added the batch, and changes it no more.
 */
export const ADDED_BY = 'addedBy';

/**
 * The items of a new batch, made at `now`: the batch, its reference (which makes a ref unique across
 * SKUs), its SKU's known-SKU item and the SKU's item at the batch's location, which put the SKU in
 * the lists of SKUs (sku-lists.ts).
 */
export const newBatchWrites = (tableName: string, batch: Batch, now: Instant, actor: string, { incomingOf, addedBy }: { readonly incomingOf?: string; readonly addedBy?: string } = {}): TransactWriteItem[] => {
  const { ref, sku } = batch;
  return [
    { Put: { TableName: tableName, Item: batchItem(batch), ConditionExpression: ITEM_IS_NEW } },
    {
      Put: {
        TableName: tableName,
        // Its qty arrived with it: the change a count taken before it applies (stock-changes.ts).
        Item: { ...batchReferenceKey(ref), type: 'BatchReference', ref, sku, ...batchDescription(batch, now, actor), [CHANGE_COUNT]: 1, ...(incomingOf === undefined ? {} : { [INCOMING_OF]: incomingOf }), ...(addedBy === undefined ? {} : { [ADDED_BY]: addedBy }) },
        ConditionExpression: ITEM_IS_NEW,
      },
    },
    // Unconditional: every batch of the SKU (at the location) writes the same item, whose index
    // keys a repeat does not change, so that only the first write of it writes the index.
    { Put: { TableName: tableName, Item: knownSkuItem(sku) } },
    { Put: { TableName: tableName, Item: skuAtLocationItem(sku, locationOf(batch)) } },
  ];
};

/** The attribute of a batch reference that holds the time of the last count applied to the batch. */
export const COUNTED_AT = 'countedAt';

/**
 * The attribute of a batch reference that counts the changes of the batch's qty recorded
 * (stock-changes.ts): one more with each, so that a count, conditioned on it as read before it read
 * the changes, is made again when one came between, whether or not it moved the qty.
 */
export const CHANGE_COUNT = 'changes';
/** What every write that records a change of the batch's qty adds on its reference. */
export const ONE_CHANGE_MORE = `${CHANGE_COUNT} :oneChange`;

/**
 * Keeps the batch reference's copy of qty and eta in step with the batch (for BatchChanged), changed
 * at `now` for `reason`; a count's time (`countedAt`) becomes the batch's last count.
 */
export const batchDescriptionWrite = (
  tableName: string,
  changed: Batch,
  now: Instant,
  actor: string,
  reason: ChangeReason = 'correction',
  count?: { readonly countedAt: string; readonly changesRead: number },
): TransactWriteItem => {
  const { ref, qty, eta } = changed;
  const countedAt = count?.countedAt;
  const counted = countedAt === undefined ? '' : `, ${COUNTED_AT} = :countedAt`;
  return {
    Update: {
      TableName: tableName,
      Key: batchReferenceKey(ref),
      UpdateExpression:
        `SET qty = :newQty, changedAt = :changedAt, ${CHANGE_REASON} = :reason, ${ACTOR} = :actor${counted}` +
        (eta === null ? ` REMOVE eta, ${INCOMING_OF}` : `, eta = :newEta REMOVE ${INCOMING_OF}`) +
        ` ADD ${ONE_CHANGE_MORE}`,
      // Guards "a reference exists only with its batch": an update would otherwise create one; for a
      // count, "a count older than the last one applied changes nothing", against one applied since
      // its read; for any other change, "a count applied counts the changes before its moment, and
      // no other" (stock-changes.ts).
      ...withValues(
        and(
          { ConditionExpression: `attribute_exists(${PK})`, ExpressionAttributeValues: {} },
          count === undefined
            ? { ConditionExpression: `(attribute_not_exists(${COUNTED_AT}) OR ${COUNTED_AT} < :changeAt)`, ExpressionAttributeValues: { ':changeAt': new Date(now).toISOString() } }
            : and(
                { ConditionExpression: `(attribute_not_exists(${COUNTED_AT}) OR ${COUNTED_AT} <= :countedAt)`, ExpressionAttributeValues: { ':countedAt': count.countedAt } },
                // Guards "a count applies every change after its moment": none recorded since it read them.
                count.changesRead === 0
                  ? { ConditionExpression: `(attribute_not_exists(${CHANGE_COUNT}) OR ${CHANGE_COUNT} = :noChanges)`, ExpressionAttributeValues: { ':noChanges': 0 } }
                  : { ConditionExpression: `${CHANGE_COUNT} = :changesRead`, ExpressionAttributeValues: { ':changesRead': count.changesRead } },
              ),
        ),
        {
          ':oneChange': 1,
          ':newQty': qty,
          ':changedAt': new Date(now).toISOString(),
          ':reason': reason,
          ':actor': actor,
          ...(eta === null ? {} : { ':newEta': eta }),
        },
      ),
    },
  };
};

/**
 * A batch that a confirm too large to move it left in the stock range with nothing left, moved out
 * of it, exactly as the confirm left it: until then allocations read it and find nothing to take.
 */
export const emptiedBatchMoveWrites = (tableName: string, batch: Batch): TransactWriteItem[] => [
  { Delete: { TableName: tableName, Key: batchWithStockKey(batch.sku, batch.ref), ...batchIsExactly(batch) } },
  { Put: { TableName: tableName, Item: batchItem(batch), ConditionExpression: ITEM_IS_NEW } },
];

/**
 * The writes of a batch kept whole (what follows) on a spread batch as read would write its item
 * as if it held its pieces' units and held units: writesOf (pieces.ts) gives a spread batch its
 * own writes, and the moves and changes that need a batch whole gather it first. A caller that
 * gets here with a spread batch is a bug, thrown rather than written.
 */
const mustBeWhole = (batch: Batch, writes: string): void => {
  if (batch.pieces !== undefined) throw new Error(`${writes} of batch ${batch.ref} as kept whole, but it is spread over ${batch.pieces.length} pieces`);
};

/** The batch moved across the edge of the stock range: deleted where it is, exactly as read, and put at its other key. */
export const batchMoveWrites = (tableName: string, batch: Batch, moved: Batch): TransactWriteItem[] => {
  mustBeWhole(batch, 'A move');
  return [
    { Delete: { TableName: tableName, Key: batchKey(batch), ...batchIsExactly(batch) } },
    { Put: { TableName: tableName, Item: batchItem(moved), ConditionExpression: ITEM_IS_NEW } },
  ];
};

/**
 * A batch's new qty and eta, as read: moved across the edge of the stock range, or in place. The
 * holds that `changed` no longer counts are ended by the same transaction (their records' writes are
 * the caller's): their units leave its count of held units.
 */
export const batchChangeWrites = (tableName: string, batch: Batch, changed: Batch): TransactWriteItem[] => {
  mustBeWhole(batch, 'A change');
  if (hasStockLeft(batch) !== hasStockLeft(changed)) return batchMoveWrites(tableName, batch, changed);
  const delta = changed.available - batch.available;
  const ended = heldOf(batch) - heldOf(changed);
  const { ConditionExpression, ExpressionAttributeValues } = etaChangedAsRead(batch, changed, staysOnItsSide(batch, delta, -ended));
  return [
    {
      Update: {
        TableName: tableName,
        Key: batchKey(batch),
        UpdateExpression:
          'SET qty = :newQty, available = available + :delta' +
          (changed.eta === null ? '' : ', eta = :newEta') +
          (ended > 0 ? ', heldUnits = heldUnits - :ended' : '') +
          (changed.eta === null ? ' REMOVE eta' : ''),
        // `qty = :qty`: the delta of `available` is the delta of the qty it replaces (and of the ended holds' units).
        ConditionExpression: `qty = :qty AND ${ConditionExpression}`,
        ExpressionAttributeValues: {
          ...ExpressionAttributeValues,
          ':qty': batch.qty,
          ':newQty': changed.qty,
          ':delta': delta,
          ...(ended > 0 ? { ':ended': ended } : {}),
          ...(changed.eta === null ? {} : { ':newEta': changed.eta }),
        },
      },
    },
  ];
};

/**
 * `available` plus `delta`, on the batch as it was found: in place, or moved across the edge of the
 * stock range. A take never leaves a batch below zero: one that would (the read was stale, or the
 * caller asked too much) goes as an update whose condition fails unless the batch has more stock
 * than was read. Only a change of qty goes below zero. A take for a hold expiring at `heldUntil`
 * counts the units it takes as held, which keeps the batch in the stock range, and keeps the item's
 * bound (heldBoundKept).
 */
export const availableWrites = (tableName: string, batch: Batch, delta: number, heldUntil?: string): TransactWriteItem[] => {
  mustBeWhole(batch, `A change of available by ${delta}`);
  const setAside = heldUntil !== undefined;
  const adjusted: Batch = { ...batch, available: batch.available + delta, ...(setAside ? { held: heldOf(batch) - delta } : {}) };
  // A take that the read says would go below zero is not moved: its in-place condition fails instead.
  if (hasStockLeft(batch) !== hasStockLeft(adjusted) && adjusted.available >= 0) return batchMoveWrites(tableName, batch, adjusted);
  const side = setAside ? staysOnItsSide(batch, delta, -delta) : staysOnItsSide(batch, delta);
  const bound = setAside ? heldBoundKept(batch, batch.heldFrom, heldUntil) : undefined;
  const conditions = [side, ...(delta < 0 ? [etaAsRead(batch)] : []), ...(bound ? [bound.condition] : [])];
  return [
    {
      Update: {
        TableName: tableName,
        Key: batchKey(batch),
        UpdateExpression: 'SET available = available + :delta' + (bound ? `, heldUnits = if_not_exists(heldUnits, :noneHeld) - :delta, ${bound.set}` : ''),
        ...withValues(and(...conditions), { ':delta': delta, ...(setAside ? { ':noneHeld': 0 } : {}) }),
      },
    },
  ];
};

/**
 * A take chose its batch by the rule that prefers batches in stock to shipments, and shipments by
 * their eta: on condition that the eta is still the one read, a PATCH that made the batch a shipment
 * (or moved its eta) between the read and the take fails the take, which reads again.
 */
export const etaAsRead = ({ eta }: Batch): Condition =>
  eta === null ? { ConditionExpression: 'attribute_not_exists(eta)', ExpressionAttributeValues: {} } : { ConditionExpression: 'eta = :readEta', ExpressionAttributeValues: { ':readEta': eta } };

/**
 * Guards "each arrival (and each batch taken off the shelf) is recorded once, and only one that
 * happened" (stock-changes.ts): a change of a batch's eta is made on the eta as read, so two that set
 * it at once, or one that races another eta, are not both recorded.
 */
export const etaChangedAsRead = (batch: Batch, changed: Batch, condition: Condition): Condition => (batch.eta === changed.eta ? condition : and(condition, etaAsRead(batch)));
