import { describe, expect, it } from 'vitest';
import { OrderLinesAlreadyAllocated, OrderNotAllocated } from '../../domain/errors';
import type { Batch } from '../../domain/model';
import { planOrder } from '../../domain/order-plans';
import { eligibilityOf } from '../../domain/routing';
import { addBatch, allocate } from '../../domain/services';
import { allocateOrder } from '../../domain/order-services';
import { createAllocationsHandler } from '../../functions/allocations';
import type { HttpResult } from '../../functions/http/route';
import { lambdaContext, postEvent } from '../support/events';
import { FakeRepository } from '../support/fake-repository';

const batch = (ref: string, sku: string, available: number, eta: string | null = null): Batch => ({ ref, sku, qty: available, available, eta });

const shop = async () => {
  const repository = new FakeRepository();
  for (const [ref, sku, qty, eta] of [
    ['lamp-shelf', 'LAMP', 3, null],
    ['lamp-ship', 'LAMP', 10, '2027-01-01'],
    ['sofa-shelf', 'SOFA', 2, null],
    ['rug-ship', 'RUG', 5, '2027-02-01'],
  ] as const) {
    await addBatch({ ref, sku, qty, eta }, repository);
  }
  return repository;
};

describe('planning an order', () => {
  it('places each line by the normal rule', () => {
    const stock = new Map([
      ['LAMP', [batch('lamp-ship', 'LAMP', 10, '2027-01-01'), batch('lamp-shelf', 'LAMP', 3)]],
      ['SOFA', [batch('sofa-shelf', 'SOFA', 2)]],
    ]);
    const plan = planOrder('o1', [{ sku: 'LAMP', qty: 4 }, { sku: 'SOFA', qty: 2 }], stock, eligibilityOf([], {}));
    expect(plan).toEqual({
      kind: 'placed',
      placements: [
        { allocation: { orderid: 'o1', sku: 'LAMP', qty: 4, batchref: 'lamp-ship' }, batch: batch('lamp-ship', 'LAMP', 10, '2027-01-01') },
        { allocation: { orderid: 'o1', sku: 'SOFA', qty: 2, batchref: 'sofa-shelf' }, batch: batch('sofa-shelf', 'SOFA', 2) },
      ],
    });
  });

  it('refuses with every line that cannot be placed, and why', () => {
    const stock = new Map<string, Batch[] | undefined>([
      ['LAMP', [batch('lamp-shelf', 'LAMP', 3)]],
      ['SOFA', []],
      ['NOPE', undefined],
    ]);
    const plan = planOrder('o1', [{ sku: 'LAMP', qty: 3 }, { sku: 'SOFA', qty: 1 }, { sku: 'NOPE', qty: 1 }], stock, eligibilityOf([], {}));
    expect(plan).toEqual({
      kind: 'refused',
      refusals: [
        { sku: 'SOFA', reason: 'out_of_stock' },
        { sku: 'NOPE', reason: 'unknown_sku' },
      ],
    });
  });
});

describe('allocating a whole order', () => {
  it('allocates every line, sorted by sku', async () => {
    const repository = await shop();
    const outcome = await allocateOrder({ orderid: 'o1', lines: [{ sku: 'SOFA', qty: 2 }, { sku: 'LAMP', qty: 1 }] }, repository);
    expect(outcome).toEqual({
      newLines: 2,
      lines: [
        { orderid: 'o1', sku: 'LAMP', qty: 1, batchref: 'lamp-shelf', location: 'default' },
        { orderid: 'o1', sku: 'SOFA', qty: 2, batchref: 'sofa-shelf', location: 'default' },
      ],
    });
  });

  it('allocates nothing when one line cannot be allocated, and names every line that cannot', async () => {
    const repository = await shop();
    const order = { orderid: 'o1', lines: [{ sku: 'LAMP', qty: 1 }, { sku: 'SOFA', qty: 3 }, { sku: 'CHAIR', qty: 1 }] };
    const refusal = await allocateOrder(order, repository).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(OrderNotAllocated);
    expect((refusal as OrderNotAllocated).lines).toEqual([
      { sku: 'SOFA', reason: 'out_of_stock' },
      { sku: 'CHAIR', reason: 'unknown_sku' },
    ]);
    expect(repository.lines.size).toBe(0);
    expect(repository.batches.get('lamp-shelf')?.available).toBe(3);
  });

  it('records the lines refused for lack of stock, not those of an unknown SKU, for their OutOfStock events', async () => {
    const repository = await shop();
    const order = { orderid: 'o1', lines: [{ sku: 'LAMP', qty: 1 }, { sku: 'SOFA', qty: 3 }, { sku: 'CHAIR', qty: 1 }] };
    await expect(allocateOrder(order, repository)).rejects.toThrow(OrderNotAllocated);
    expect(repository.outOfStock).toEqual([{ orderid: 'o1', sku: 'SOFA', qty: 3 }]);
  });

  it('counts a line already allocated with the same qty as done, not new, and answers a full repeat with no new line', async () => {
    const repository = await shop();
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 1 }, repository);
    const order = { orderid: 'o1', lines: [{ sku: 'LAMP', qty: 1 }, { sku: 'RUG', qty: 5 }] };
    expect((await allocateOrder(order, repository)).newLines).toBe(1);
    // The rug's batch is empty now: the repeat is answered from the stored lines.
    expect(await allocateOrder(order, repository)).toEqual({
      newLines: 0,
      lines: [
        { orderid: 'o1', sku: 'LAMP', qty: 1, batchref: 'lamp-shelf', location: 'default' },
        { orderid: 'o1', sku: 'RUG', qty: 5, batchref: 'rug-ship', location: 'default' },
      ],
    });
    expect(repository.batches.get('lamp-shelf')?.available).toBe(2);
  });

  it('refuses the whole order when a line is allocated with another qty, and changes nothing', async () => {
    const repository = await shop();
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 1 }, repository);
    const refusal = await allocateOrder({ orderid: 'o1', lines: [{ sku: 'LAMP', qty: 2 }, { sku: 'SOFA', qty: 1 }] }, repository).catch(
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(OrderLinesAlreadyAllocated);
    expect((refusal as OrderLinesAlreadyAllocated).lines).toEqual([{ sku: 'LAMP', qty: 1 }]);
    expect(await repository.allocationOf('o1', 'SOFA')).toBeUndefined();
  });

  it('plans again when another request took the stock of a chosen batch first', async () => {
    const repository = await shop();
    const save = repository.saveAllocations.bind(repository);
    let first = true;
    repository.saveAllocations = async (placements) => {
      if (first) {
        first = false;
        await allocate({ orderid: 'rival', sku: 'LAMP', qty: 3 }, repository);
      }
      return save(placements);
    };
    const outcome = await allocateOrder({ orderid: 'o1', lines: [{ sku: 'LAMP', qty: 2 }] }, repository);
    expect(outcome.lines).toEqual([{ orderid: 'o1', sku: 'LAMP', qty: 2, batchref: 'lamp-ship', location: 'default' }]);
  });
});

describe('POST /orders', () => {
  const send = async (body: unknown, repository?: FakeRepository) => {
    const handler = createAllocationsHandler(repository ?? (await shop()));
    const result: HttpResult = await handler(postEvent('/orders', body), lambdaContext());
    return { status: result.statusCode, body: result.body ? JSON.parse(result.body) : undefined };
  };

  it('answers 201 with every line and its batch, then 200 to the same order again', async () => {
    const repository = await shop();
    const order = { orderid: 'o1', lines: [{ sku: 'SOFA', qty: 1 }, { sku: 'LAMP', qty: 1 }] };
    const lines = [
      { sku: 'LAMP', qty: 1, batchref: 'lamp-shelf', location: 'default' },
      { sku: 'SOFA', qty: 1, batchref: 'sofa-shelf', location: 'default' },
    ];
    expect(await send(order, repository)).toEqual({ status: 201, body: { orderid: 'o1', lines } });
    expect(await send(order, repository)).toEqual({ status: 200, body: { orderid: 'o1', lines } });
  });

  it('answers 400 naming every line that cannot be allocated', async () => {
    expect(await send({ orderid: 'o1', lines: [{ sku: 'SOFA', qty: 3 }, { sku: 'CHAIR', qty: 1 }, { sku: 'LAMP', qty: 1 }] })).toEqual({
      status: 400,
      body: {
        message: 'Cannot allocate order o1', code: 'order_refused',
        lines: [
          { sku: 'SOFA', reason: 'out_of_stock' },
          { sku: 'CHAIR', reason: 'unknown_sku' },
        ],
      },
    });
  });

  it('answers 409 with the allocated quantities of the lines that differ', async () => {
    const repository = await shop();
    await allocate({ orderid: 'o1', sku: 'LAMP', qty: 1 }, repository);
    expect(await send({ orderid: 'o1', lines: [{ sku: 'LAMP', qty: 2 }] }, repository)).toEqual({
      status: 409,
      body: { message: 'Order o1 already has lines with other quantities', code: 'line_exists', lines: [{ sku: 'LAMP', qty: 1 }] },
    });
  });

  it.each([
    ['no lines', { orderid: 'o1', lines: [] }, 'lines', 'lines must be an array of 1 to 25 lines {sku, qty}, each sku once'],
    ['26 lines', { orderid: 'o1', lines: Array.from({ length: 26 }, (_, index) => ({ sku: `S${index}`, qty: 1 })) }, 'lines', 'lines must be an array of 1 to 25 lines {sku, qty}, each sku once'],
    [
      'a sku twice',
      { orderid: 'o1', lines: [{ sku: 'A', qty: 1 }, { sku: 'B', qty: 1 }, { sku: 'C', qty: 1 }, { sku: 'A', qty: 2 }] },
      'lines.3.sku',
      'lines.3.sku must not repeat the sku of an earlier line',
    ],
    ['a bad qty', { orderid: 'o1', lines: [{ sku: 'A', qty: 0 }] }, 'lines.0.qty', 'lines.0.qty must be an integer from 1 to 1000000000'],
    ['a blank orderid', { orderid: ' ', lines: [{ sku: 'A', qty: 1 }] }, 'orderid', 'orderid must not be blank'],
  ])('answers 400 for %s, naming where', async (_, body, path, message) => {
    expect(await send(body)).toEqual({ status: 400, body: { message: 'Invalid request body', code: 'validation_failed', issues: [{ path, message }] } });
  });
});
