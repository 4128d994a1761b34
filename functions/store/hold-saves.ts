import { StoreUnavailable } from '../../domain/errors';
import type { Hold, Instant } from '../../domain/holds';
import type { Batch } from '../../domain/model';
import type { ConditionalWrite, ConfirmHoldResult, HoldEnding } from '../../domain/ports';
import { describeError, logger } from '../telemetry';
import { existingLines } from './allocation-saves';
import { emptiedBatchMoveWrites } from './batches';
import { type CountPlaces, type HoldWrites, sendHoldWrites } from './held-units';
import { conditionalHoldWrite } from './hold-give-backs';
import { holdConfirmWrites, holdEndWrites, holdExtensionWrites, holdKey } from './holds';
import { parseStoredItem } from './items';
import type { KnownPieces } from './spread-batches';
import type { ConflictRetryPolicy, StoreCalls } from './store-calls';
import type { TableReads } from './table-reads';
import type { World } from './world';

/*
 * A hold's record read, and the writes that end it, extend it and confirm it, for the repository
 * (BatchRepository.hold, endHold, extendHold, confirmHold). Their items and conditions are
 * holds.ts's and held-units.ts's; a hold's placing is a take's, allocation-saves.ts's.
 */
export class HoldSaves {
  constructor(
    private readonly calls: StoreCalls,
    private readonly reads: TableReads,
    private readonly tableName: string,
    private readonly conflictRetry: ConflictRetryPolicy,
    private readonly knownPieces: KnownPieces,
    private readonly world: Pick<World, 'random'>,
  ) {}

  async hold(holdid: string): Promise<Hold | undefined> {
    const item = await this.reads.item(holdKey(holdid));
    const stored = item && parseStoredItem(item);
    return stored?.kind === 'hold' ? stored.hold : undefined;
  }

  end(hold: Hold, ending: HoldEnding, now: Instant, givenBackOn: readonly string[]): Promise<ConditionalWrite> {
    return this.write((places) => holdEndWrites(this.tableName, [{ hold, ending, givenBackOn }], now, places));
  }

  /**
   * An expiry moved earlier keeps each batch's bound without reading it: kept first, and lowered
   * where that write's condition found it above (holdExtensionWrites).
   */
  async extend(hold: Hold, expiresAt: string, now: Instant): Promise<ConditionalWrite> {
    let lowered = new Set<string>();
    for (;;) {
      const { items, boundsAt } = holdExtensionWrites(this.tableName, hold, expiresAt, now, lowered);
      const cancellation = await this.calls.transactWrite(items);
      if (!cancellation) return 'saved';
      const failed = cancellation.flatMap((reason, at) => (reason.Code === 'ConditionalCheckFailed' ? [at] : []));
      const toLower = failed.flatMap((at) => {
        const batchref = boundsAt.get(at);
        return batchref !== undefined && !lowered.has(batchref) ? [batchref] : [];
      });
      if (toLower.length === 0 || toLower.length !== failed.length) {
        this.calls.raceLost(cancellation);
        return 'changed';
      }
      lowered = new Set([...lowered, ...toLower]);
    }
  }

  async confirm(hold: Hold, orderid: string, now: Instant, batches?: readonly Batch[]): Promise<ConfirmHoldResult> {
    const build = (places: CountPlaces) => holdConfirmWrites(this.tableName, hold, orderid, now, places, batches);
    const { writes, cancellation } = await sendHoldWrites(this.calls, this.knownPieces, this.conflictRetry, this.world, build);
    if (!cancellation) {
      // The confirm is committed: a store that does not answer these moves (the request's deadline)
      // does not make it a 503. A batch left in the stock range with nothing left, allocations find
      // nothing to take on, and the next read of it alone moves it (DynamoDbBatchRepository.batchItem).
      try {
        for (const batch of writes.leftEmpty) await this.calls.conditionalWrite(emptiedBatchMoveWrites(this.tableName, batch));
      } catch (error) {
        if (!(error instanceof StoreUnavailable)) throw error;
        logger.warn({ message: 'Batches a confirm emptied not moved out of the stock range', holdid: hold.holdid, cause: describeError(error) });
      }
      return { outcome: 'saved' };
    }
    const existing = existingLines(cancellation, writes.linePuts);
    if (existing.length > 0) return { outcome: 'lines-exist', existing };
    this.calls.raceLost(cancellation);
    return { outcome: 'changed' };
  }

  /** A write of holds whose cancellation means only that something is no longer as read. */
  write(build: (places: CountPlaces) => HoldWrites): Promise<ConditionalWrite> {
    return conditionalHoldWrite(this.calls, this.knownPieces, this.conflictRetry, this.world, build);
  }
}
