import { once } from 'node:events';
import type { Context } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreUnavailable } from '../../domain/errors';
import { OVERDUE_AFTER_MS, holdStatus, placeHold } from '../../domain/hold-services';
import type { BatchRepository } from '../../domain/ports';
import { SWEEP_STOPS_BEFORE_TIMEOUT_MS, createSweepHoldsHandler } from '../../functions/sweep-holds';
import { OPERATION_DIMENSION, SERVICE_NAME, SWEEP_HOLDS_OPERATION } from '../../functions/telemetry-names';
import { lambdaContext } from '../support/events';
import { FakeRepository } from '../support/fake-repository';
import { type CapturedTelemetry, captureTelemetry } from '../support/telemetry';

/*
 * The sweeper as Lambda runs it (functions/sweep-holds.ts): what it ends, what it logs, and the
 * metrics its alarm reads (docs/operations.md, "The hold sweeper").
 */

let telemetry: CapturedTelemetry;
beforeEach(() => {
  telemetry = captureTelemetry();
});
afterEach(() => telemetry.restore());

const sweeping = { service: SERVICE_NAME, [OPERATION_DIMENSION]: SWEEP_HOLDS_OPERATION };

/** A shop with 5 lamps, 2 of them held for a minute and 1 for an hour. */
const shop = async () => {
  const repository = new FakeRepository();
  await repository.addBatch({ ref: 'lamp-1', sku: 'LAMP', qty: 5, available: 5, eta: null });
  await placeHold({ holdid: 'cart-short', lines: [{ sku: 'LAMP', qty: 2 }], ttlSeconds: 60 }, repository);
  await placeHold({ holdid: 'cart-long', lines: [{ sku: 'LAMP', qty: 1 }], ttlSeconds: 3_600 }, repository);
  return { repository, sweep: () => createSweepHoldsHandler(repository)({}, lambdaContext()) };
};

/**
 * The store as the adapter is bound to a deadline (withDeadline): once it has passed, every call is
 * refused with StoreUnavailable; and the ending of `slowHold` answers only then, as a call to a store
 * that stopped answering would.
 */
const boundToDeadlines = (repository: FakeRepository, slowHold: string) => {
  const withDeadline = (deadline: AbortSignal): BatchRepository => {
    const refusedOnceAborted = async <Answer>(call: () => Promise<Answer>): Promise<Answer> => {
      if (deadline.aborted) throw new StoreUnavailable('The request ran out of time');
      return call();
    };
    return Object.assign(Object.create(repository) as FakeRepository, {
      expiredHolds: (...args: Parameters<FakeRepository['expiredHolds']>) => refusedOnceAborted(() => repository.expiredHolds(...args)),
      hold: (holdid: string) => refusedOnceAborted(() => repository.hold(holdid)),
      endHold: async (...args: Parameters<FakeRepository['endHold']>) => {
        if (args[0].holdid === slowHold && !deadline.aborted) await once(deadline, 'abort');
        return refusedOnceAborted(() => repository.endHold(...args));
      },
    });
  };
  Object.assign(repository, { withDeadline });
};

/** A Lambda context whose invocation has `ms` left before the sweep's deadline, and its time to report and answer after. */
const sweepDeadlineIn = (ms: number): Context => ({ ...lambdaContext(), getRemainingTimeInMillis: () => SWEEP_STOPS_BEFORE_TIMEOUT_MS + ms });

describe('the hold sweeper', () => {
  it('ends the expired holds, gives their units back, and counts them with 0 overdue', async () => {
    const { repository, sweep } = await shop();
    repository.now += 61_000;

    expect(await sweep()).toEqual({ ended: 1, failed: 0, overdue: 0, stoppedAtDeadline: false });

    expect(repository.holds.get('cart-short')?.status).toBe('expired');
    expect((await holdStatus('cart-long', repository)).status).toBe('active');
    expect(repository.batches.get('lamp-1')).toMatchObject({ available: 4, held: 1 });
    expect([...repository.held.values()].map(({ holdid }) => holdid)).toEqual(['cart-long']);
    expect(telemetry.metrics).toEqual([expect.objectContaining({ dimensions: sweeping, counts: { HoldsExpired: 1, HoldsOverdue: 0 } })]);
    expect(telemetry.entries).toEqual([expect.objectContaining({ level: 'INFO', message: 'Holds swept', ended: 1, failed: 0, overdue: 0 })]);
  });

  it('publishes 0 overdue when nothing has expired, so that its alarm tells silence from calm', async () => {
    const { sweep } = await shop();

    expect(await sweep()).toEqual({ ended: 0, failed: 0, overdue: 0, stoppedAtDeadline: false });

    expect(telemetry.metrics).toEqual([expect.objectContaining({ dimensions: sweeping, counts: { HoldsOverdue: 0 } })]);
  });

  it('warns of the holds it could not end, counted as overdue once 5 minutes past their expiry', async () => {
    const { repository, sweep } = await shop();
    repository.now += 60_000 + OVERDUE_AFTER_MS + 1;
    repository.endHold = async () => 'changed';

    expect(await sweep()).toMatchObject({ ended: 0, overdue: 1 });

    expect(telemetry.entries).toEqual([expect.objectContaining({ level: 'WARN', message: 'Holds swept', ended: 0, overdue: 1 })]);
    expect(telemetry.metrics).toEqual([expect.objectContaining({ counts: { HoldsOverdue: 1 } })]);
  });

  it('pages past the holds it cannot end, trying each once, so that they hold back none of the later ones', async () => {
    const repository = new FakeRepository();
    await repository.addBatch({ ref: 'lamp-1', sku: 'LAMP', qty: 200, available: 200, eta: null });
    // A full page of holds whose ending keeps failing (a batch conflicts keep hitting), all expiring first.
    const stuck = Array.from({ length: 100 }, (_, index) => `cart-stuck-${String(index).padStart(3, '0')}`);
    for (const holdid of stuck) await placeHold({ holdid, lines: [{ sku: 'LAMP', qty: 1 }], ttlSeconds: 60 }, repository);
    repository.now += 1;
    await placeHold({ holdid: 'cart-later', lines: [{ sku: 'LAMP', qty: 1 }], ttlSeconds: 60 }, repository);
    repository.now += 61_000;
    const tried: string[] = [];
    const endHold = repository.endHold.bind(repository);
    repository.endHold = async (hold, ...rest) => {
      tried.push(hold.holdid);
      if (stuck.includes(hold.holdid)) throw new Error('Transaction cancelled: a conflict');
      return endHold(hold, ...rest);
    };

    expect(await createSweepHoldsHandler(repository)({}, lambdaContext())).toMatchObject({ ended: 1, failed: 100 });

    expect(repository.holds.get('cart-later')?.status).toBe('expired');
    expect(tried.sort()).toEqual(['cart-later', ...stuck]);
  });

  it('stops at its deadline, reports the holds it ended by then, and succeeds, leaving the rest to the next sweep', async () => {
    const { repository } = await shop();
    await placeHold({ holdid: 'cart-slow', lines: [{ sku: 'LAMP', qty: 1 }], ttlSeconds: 60 }, repository);
    repository.now += 61_000;
    boundToDeadlines(repository, 'cart-slow');

    const sweep = await createSweepHoldsHandler(repository)({}, sweepDeadlineIn(20));

    expect(sweep).toEqual({ ended: 1, failed: 0, overdue: 0, stoppedAtDeadline: true });
    expect(repository.holds.get('cart-short')?.status).toBe('expired');
    expect(repository.holds.get('cart-slow')?.status).toBe('active');
    expect(telemetry.entries).toEqual([
      expect.objectContaining({ level: 'WARN', message: 'Holds swept', ended: 1, failed: 0, overdue: 0, stoppedAtDeadline: true }),
    ]);
    expect(telemetry.metrics).toEqual([expect.objectContaining({ dimensions: sweeping, counts: { HoldsExpired: 1, HoldsOverdue: 0 } })]);
  });

  it('counts the holds it ended even when the sweep then fails', async () => {
    const { repository, sweep } = await shop();
    repository.now += 61_000;
    const expiredHolds = repository.expiredHolds.bind(repository);
    let reads = 0;
    repository.expiredHolds = async (...args) => {
      // The count of the overdue holds, after the one page of expired holds, finds the store gone.
      if (++reads > 1) throw new Error('The index did not answer');
      return expiredHolds(...args);
    };

    await expect(sweep()).rejects.toThrow('The index did not answer');

    expect(repository.holds.get('cart-short')?.status).toBe('expired');
    expect(telemetry.metrics).toEqual([expect.objectContaining({ dimensions: sweeping, counts: { HoldsExpired: 1 } })]);
  });

  it('logs a sweep that failed as an error, and fails the invocation for Lambda to count', async () => {
    const { repository, sweep } = await shop();
    repository.expiredHolds = async () => {
      throw new Error('The index did not answer');
    };

    await expect(sweep()).rejects.toThrow('The index did not answer');

    expect(telemetry.entries).toEqual([
      expect.objectContaining({ level: 'ERROR', message: 'Hold sweep failed', cause: { name: 'Error', message: 'The index did not answer' } }),
    ]);
  });
});
