import type { CancellationReason } from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBDocumentClient,
  TransactGetCommand,
  type TransactGetCommandInput,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { StoreUnavailable } from '../../domain/errors';
import type { ConditionalWrite, StoreObserver } from '../../domain/ports';
import { isRetryableCancellation, isStoreUnavailable, transactionCancellation } from './store-errors';
import type { World } from './world';

/*
 * How the DynamoDB adapter sends its calls for one request: within the request's deadline, with a
 * transaction that DynamoDB cancelled for a conflict or throttling sent again, and what it did told
 * to the request's observer. What the calls say is the adapter's (batch-repository.ts). The backoff
 * between attempts is drawn and waited in the world's chance and time (world.ts), so that a
 * simulated run retries alike for its seed.
 */

export type TransactWriteItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];
export type TransactGetItem = NonNullable<TransactGetCommandInput['TransactItems']>[number];

/** The items one transaction may hold. Its other limit, 4 MB, is far off: every item is under 1 KB (docs/capacity.md). */
export const MAX_TRANSACTION_ITEMS = 100;

/** Why each item of a cancelled transaction failed, at the item's place. */
export type Cancellation = readonly CancellationReason[];

export interface ConflictRetryPolicy {
  /** Attempts of one transaction that DynamoDB cancelled for a conflict or throttling, in all. */
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/** Conflicts clear in milliseconds; four tries with full jitter spread competitors over ~200 ms. */
export const defaultConflictRetryPolicy: ConflictRetryPolicy = { maxAttempts: 4, baseDelayMs: 25, maxDelayMs: 200 };

/**
 * A transaction that may change what it sends when DynamoDB cancels it for a conflict or throttling:
 * a take of stock that can go to another item of its batch. `next` answers the items to send next,
 * or undefined to stop and answer that cancellation; `maxAttempts` may be more than the policy's,
 * since each attempt meets other items.
 */
export interface Elsewhere {
  readonly next: (reasons: Cancellation, attempt: number) => { readonly items: TransactWriteItem[]; readonly atOnce: boolean } | undefined;
  readonly maxAttempts: number;
}

/** The one call the repository makes, so tests can hand in a client that fails on purpose. */
export type DocumentSender = Pick<DynamoDBDocumentClient, 'send'>;

export class StoreCalls {
  constructor(
    private readonly client: DocumentSender,
    private readonly conflictRetry: ConflictRetryPolicy,
    private readonly world: Pick<World, 'random' | 'sleep'>,
    private readonly deadline?: AbortSignal,
    private readonly observer?: StoreObserver,
  ) {}

  /**
   * Sends one call within the request's deadline: none starts once it has passed, and one in flight
   * is abandoned when it passes (a write already delivered may still commit, as when an answer is
   * lost; each is one transaction, so a retry is safe). Turns the failures of an unreachable or
   * overloaded store, and a passed deadline, into StoreUnavailable (503).
   */
  async call<Output>(send: (options: { abortSignal?: AbortSignal }) => Promise<Output>): Promise<Output> {
    try {
      this.deadline?.throwIfAborted();
      return await send({ abortSignal: this.deadline });
    } catch (error) {
      if (this.deadline?.aborted) throw new StoreUnavailable('The request ran out of time', { cause: error });
      if (isStoreUnavailable(error)) throw new StoreUnavailable('The store did not answer', { cause: error });
      throw error;
    }
  }

  /** Waits for work another request of this process started, no longer than this request's deadline. */
  async waitFor<Result>(work: Promise<Result>): Promise<Result> {
    const deadline = this.deadline;
    if (!deadline) return work;
    return this.call(
      () =>
        new Promise<Result>((resolve, reject) => {
          const onAbort = () => reject(deadline.reason);
          deadline.addEventListener('abort', onAbort, { once: true });
          work.then(resolve, reject).finally(() => deadline.removeEventListener('abort', onAbort));
        }),
    );
  }

  /**
   * Runs a transaction, retrying the cancellations that clear by themselves (a conflict with another
   * transaction on the same item, throttling) with full-jitter backoff. Answers the reasons of a
   * cancellation by failed conditions, or undefined when the transaction committed. `elsewhere`, when
   * given, says what to send instead at each such cancellation, whether at once (items that the
   * conflict was not on), and how many attempts to make.
   */
  async transactWrite(items: TransactWriteItem[], elsewhere?: Elsewhere): Promise<Cancellation | undefined> {
    let sent = withinTransactionLimit(items);
    const instead = elsewhere && ((reasons: Cancellation, attempt: number) => {
      const next = elsewhere.next(reasons, attempt);
      if (next) sent = withinTransactionLimit(next.items);
      return next && (next.atOnce ? 'at-once' : 'after-backoff');
    });
    const { cancellation } = await this.retryingConflicts(
      (options) => this.client.send(new TransactWriteCommand({ TransactItems: sent }), options),
      instead,
      elsewhere?.maxAttempts,
    );
    return cancellation;
  }

  /**
   * Reads items in one transaction, which a write in flight on one of them cancels as it would a
   * transaction of writes (TransactionConflict): retried alike, and a 503 when it outlasts the
   * retries. The items found, at their places.
   */
  async transactGet(items: TransactGetItem[]): Promise<(Record<string, unknown> | undefined)[]> {
    const { output, cancellation } = await this.retryingConflicts((options) =>
      this.client.send(new TransactGetCommand({ TransactItems: items }), options),
    );
    // A read has no condition to fail: only a conflict or throttling cancels it, and those are retried.
    if (cancellation) throw new Error(`Transactional read cancelled: ${cancellation.map((reason) => reason.Code).join(', ')}`);
    return (output?.Responses ?? []).map(({ Item }) => Item);
  }

  /**
   * Sends a transaction again while DynamoDB cancels it for reasons that clear by themselves, with
   * full-jitter backoff; `instead`, when given, says whether to go on (with other items), and when.
   */
  private async retryingConflicts<Output>(
    send: (options: { abortSignal?: AbortSignal }) => Promise<Output>,
    instead?: (reasons: Cancellation, attempt: number) => 'at-once' | 'after-backoff' | undefined,
    maxAttempts = this.conflictRetry.maxAttempts,
  ): Promise<{ output?: Output; cancellation?: Cancellation }> {
    for (let attempt = 1; ; attempt++) {
      try {
        return { output: await this.call(send) };
      } catch (error) {
        const reasons = transactionCancellation(error);
        if (!reasons) throw error;
        if (!isRetryableCancellation(reasons)) return { cancellation: reasons };
        if (attempt >= maxAttempts) {
          throw new StoreUnavailable(`Transaction still conflicting after ${attempt} attempts`, { cause: error });
        }
        this.observer?.transactionRetried(reasons.map((reason) => reason.Code ?? 'None'));
        const when = instead ? instead(reasons, attempt) : 'after-backoff';
        if (!when) return { cancellation: reasons };
        if (when === 'after-backoff') await this.world.sleep(fullJitter(this.conflictRetry, attempt, this.world));
      }
    }
  }

  /** A transaction whose failed conditions all mean "something read has changed since". */
  async conditionalWrite(items: TransactWriteItem[]): Promise<ConditionalWrite> {
    const cancellation = await this.transactWrite(items);
    if (!cancellation) return 'saved';
    this.raceLost(cancellation);
    return 'changed';
  }

  /**
   * A transaction cancelled by failed conditions found what it was read against changed: another
   * request got there first, which the observer hears of. Any other cancellation is a bug.
   */
  raceLost(cancellation: Cancellation): void {
    if (!cancellation.some((reason) => reason.Code === 'ConditionalCheckFailed')) {
      throw new Error(`Transaction cancelled: ${cancellation.map((reason) => reason.Code).join(', ')}`);
    }
    this.observer?.raceLost();
  }
}

/**
 * DynamoDB answers a transaction of more items with a ValidationException, after nothing was written:
 * every transaction the adapter builds is bounded below it (docs/capacity.md, "Whole orders: the
 * transaction's limits"), so one that is not is a bug, said as one before it is sent.
 */
const withinTransactionLimit = (items: TransactWriteItem[]): TransactWriteItem[] => {
  if (items.length > MAX_TRANSACTION_ITEMS) throw new Error(`A transaction of ${items.length} items, over DynamoDB's ${MAX_TRANSACTION_ITEMS}`);
  return items;
};

export const fullJitter = ({ baseDelayMs, maxDelayMs }: ConflictRetryPolicy, attempt: number, world: Pick<World, 'random'>): number =>
  world.random() * Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
