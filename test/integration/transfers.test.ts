import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Batch, changedBatch } from '../../domain/model';
import { spreadWrites } from '../../functions/store/pieces';
import { PIECES_PER_SPREAD } from '../../functions/store/spread-batches';
import { checkInvariants } from '../../tools/invariants';
import { type HandlerService, serviceOver } from '../reliability/support/service';
import { type TestTable, createTestTable, uniqueId } from '../support/dynamodb';
import { routeEvent } from '../support/events';

/*
 * Transfers (docs/api.md, "Transfers") through the batches handler over DynamoDB Local: every route's
 * answers, what the store holds after each, and races for the units: a transfer against allocations
 * for the last units, and a cancel against an allocation onto the incoming batch. DynamoDB Local runs
 * transactions one at a time, so each race is decided by the conditions alone.
 */

const context = {} as { table: TestTable; service: HandlerService };
beforeAll(async () => {
  context.table = await createTestTable();
  context.service = serviceOver(context.table.repository());
  const put = (id: string, body: unknown) => context.service.invoke(routeEvent('PUT /locations/{id}', { pathParameters: { id }, body }));
  expect((await put('lyon', { name: 'Lyon', priority: 10, serves: ['FR'] })).status).toBe(201);
  expect((await put('closed', { name: 'Closed', priority: 20, serves: ['FR'], active: false })).status).toBe(201);
});
afterAll(() => context.table.drop());

const postTransfer = (body: unknown) => context.service.invoke(routeEvent('POST /transfers', { body }));
const getTransfer = (transferid: string) => context.service.invoke(routeEvent('GET /transfers/{transferid}', { pathParameters: { transferid } }));
const deleteTransfer = (transferid: string) => context.service.invoke(routeEvent('DELETE /transfers/{transferid}', { pathParameters: { transferid } }));
const getBatch = (ref: string) => context.service.invoke(routeEvent('GET /batches/{ref}', { pathParameters: { ref } }));
const patchBatch = (ref: string, body: unknown) => context.service.invoke(routeEvent('PATCH /batches/{ref}', { pathParameters: { ref }, body }));

/** A SKU of its own, with one batch in stock at default of `qty`. */
const stockAtDefault = async (qty: number) => {
  const sku = uniqueId('LAMP');
  const ref = uniqueId('batch');
  expect((await context.service.addBatch({ ref, sku, qty, eta: null })).status).toBe(201);
  return { sku, ref };
};

const transferOf = (sku: string, qty: number) => ({ transferid: uniqueId('transfer'), sku, qty, from: 'default', to: 'lyon', eta: '2027-03-01' });

const noViolations = async () => expect(await checkInvariants(context.table.documentClient, context.table.tableName)).toEqual([]);

describe('POST /transfers', () => {
  it('answers 201, takes the units off their batch and adds the incoming shipment at to', async () => {
    const { sku, ref } = await stockAtDefault(10);
    const transfer = transferOf(sku, 4);
    expect(await postTransfer(transfer)).toMatchObject({ status: 201, body: { transferid: transfer.transferid, from_batchref: ref, ref: transfer.transferid } });
    expect((await getBatch(ref)).body).toMatchObject({ qty: 6, allocated: 0, available: 6, location: 'default' });
    expect((await getBatch(transfer.transferid)).body).toMatchObject({ sku, qty: 4, available: 4, eta: '2027-03-01', location: 'lyon' });
    expect(await getTransfer(transfer.transferid)).toMatchObject({
      status: 200,
      body: { ...transfer, from_batchref: ref, ref: transfer.transferid, status: 'active' },
    });
    await noViolations();
  });

  it('answers a repeat with 200 and the stored answer, taking nothing more, and another body under the transferid with 409', async () => {
    const { sku, ref } = await stockAtDefault(10);
    const transfer = transferOf(sku, 4);
    await postTransfer(transfer);
    expect(await postTransfer(transfer)).toMatchObject({ status: 200, body: { transferid: transfer.transferid, from_batchref: ref, ref: transfer.transferid } });
    expect((await getBatch(ref)).body).toMatchObject({ qty: 6 });
    expect(await postTransfer({ ...transfer, qty: 5 })).toMatchObject({ status: 409, body: { message: `Transfer ${transfer.transferid} already exists with other fields`, code: 'transfer_exists' } });
  });

  it('takes a batch last units, moving it out of the stock range, and refuses what no batch at from has whole', async () => {
    const { sku, ref } = await stockAtDefault(3);
    expect((await postTransfer(transferOf(sku, 3))).status).toBe(201);
    expect((await getBatch(ref)).body).toMatchObject({ qty: 0, available: 0 });
    expect(await postTransfer(transferOf(sku, 1))).toMatchObject({
      status: 400,
      body: { message: `No batch in stock at location default has 1 unit of sku ${sku}`, code: 'out_of_stock' },
    });
    await noViolations();
  });

  it('refuses unknown, inactive and equal locations with 400 naming the field, an unknown sku, and a transferid a batch has', async () => {
    const { sku, ref } = await stockAtDefault(5);
    expect(await postTransfer({ ...transferOf(sku, 1), to: 'nowhere' })).toMatchObject({
      status: 400,
      body: { message: 'Invalid request body', code: 'unknown_location', issues: [{ path: 'to', message: 'to must be the id of an existing location: there is no location nowhere' }] },
    });
    expect(await postTransfer({ ...transferOf(sku, 1), to: 'closed' })).toMatchObject({ status: 400, body: { issues: [{ path: 'to' }] } });
    expect(await postTransfer({ ...transferOf(sku, 1), from: 'closed' })).toMatchObject({ status: 400, body: { issues: [{ path: 'from' }] } });
    expect(await postTransfer({ ...transferOf(sku, 1), to: 'default' })).toMatchObject({ status: 400, body: { issues: [{ path: 'to' }] } });
    expect(await postTransfer({ ...transferOf(sku, 1), eta: null })).toMatchObject({ status: 400, body: { issues: [{ path: 'eta' }] } });
    expect(await postTransfer(transferOf(uniqueId('SOFA'), 1))).toMatchObject({ status: 400, body: { message: expect.stringMatching(/^Invalid sku/) } });
    expect(await postTransfer({ ...transferOf(sku, 1), transferid: ref })).toMatchObject({ status: 409, body: { message: `Transfer ${ref} cannot be made: transferid ${ref} is a batch's ref, which its incoming batch would take`, code: 'batch_exists' } });
    expect((await getBatch(ref)).body).toMatchObject({ qty: 5, available: 5 });
    await noViolations();
  });
});

describe('GET /transfers/{transferid}', () => {
  it('answers 404 for a transfer never made', async () => {
    expect(await getTransfer(uniqueId('transfer'))).toMatchObject({ status: 404 });
  });
});

describe('DELETE /transfers/{transferid}', () => {
  it('answers 204, gives the units back, removes the incoming batch; a repeat answers 204, and the transfer reads as cancelled', async () => {
    const { sku, ref } = await stockAtDefault(10);
    const transfer = transferOf(sku, 4);
    await postTransfer(transfer);
    expect((await deleteTransfer(transfer.transferid)).status).toBe(204);
    expect((await getBatch(ref)).body).toMatchObject({ qty: 10, available: 10 });
    expect((await getBatch(transfer.transferid)).status).toBe(404);
    expect((await deleteTransfer(transfer.transferid)).status).toBe(204);
    expect((await getBatch(ref)).body).toMatchObject({ qty: 10 });
    expect(await getTransfer(transfer.transferid)).toMatchObject({ status: 200, body: { status: 'cancelled' } });
    expect(await postTransfer(transfer)).toMatchObject({ status: 409, body: { message: `Transfer ${transfer.transferid} was cancelled`, code: 'transfer_exists' } });
    await noViolations();
  });

  it('gives the units back to a batch emptied since, moving it back into the stock range', async () => {
    const { sku, ref } = await stockAtDefault(4);
    const transfer = transferOf(sku, 2);
    await postTransfer(transfer);
    expect((await context.service.allocate({ orderid: uniqueId('order'), sku, qty: 2 })).body).toMatchObject({ batchref: ref });
    expect((await deleteTransfer(transfer.transferid)).status).toBe(204);
    expect((await getBatch(ref)).body).toMatchObject({ qty: 4, allocated: 2, available: 2 });
    expect((await context.service.allocate({ orderid: uniqueId('order'), sku, qty: 2 })).body).toMatchObject({ batchref: ref });
    await noViolations();
  });

  it('gives the units back to a batch still owed units by its lines (a PATCH cut off before its moves), where it is stored', async () => {
    const { sku, ref } = await stockAtDefault(10);
    const transfer = transferOf(sku, 2);
    await postTransfer(transfer);
    expect((await context.service.allocate({ orderid: uniqueId('order'), sku, qty: 8 })).status).toBe(201);
    // The change of the qty to 0 written, its lines' moves not: available -8, the batch among the exhausted.
    const repository = context.table.repository();
    const source = (await repository.batch(ref, sku)) as Batch;
    expect((await repository.changeBatch(source, changedBatch(source, { qty: 0 }))).outcome).toBe('saved');

    expect((await deleteTransfer(transfer.transferid)).status).toBe(204);
    expect(await repository.batch(ref, sku)).toMatchObject({ qty: 2, available: -6 });
    // The PATCH repeated finishes it: the line, with nowhere else to go, leaves its order.
    expect((await patchBatch(ref, { qty: 2 })).status).toBe(200);
    await noViolations();
  });

  it('gathers an incoming batch a sale spread over pieces, then cancels the transfer once its lines are gone', async () => {
    const { sku } = await stockAtDefault(100);
    const transfer = transferOf(sku, 80);
    await postTransfer(transfer);
    const repository = context.table.repository();
    const incoming = (await repository.batch(transfer.transferid, sku)) as Batch;
    const moved = incoming.available - 8;
    await context.table.documentClient.send(
      new TransactWriteCommand({ TransactItems: spreadWrites(context.table.tableName, incoming, moved, Math.min(PIECES_PER_SPREAD, moved), uniqueId('spread'), new Date().toISOString()) }),
    );

    expect((await deleteTransfer(transfer.transferid)).status).toBe(204);
    expect((await getBatch(transfer.transferid)).status).toBe(404);
    await noViolations();
  });

  it('answers 409 to a cancel once the incoming batch was received, though a PATCH made it a shipment of the same qty again: the units a later transfer took from it stay accounted', async () => {
    const { sku } = await stockAtDefault(10);
    const first = transferOf(sku, 5);
    await postTransfer(first);
    expect((await patchBatch(first.transferid, { eta: null })).status).toBe(200);
    const onward = { ...transferOf(sku, 2), from: 'lyon', to: 'default' };
    expect(await postTransfer(onward)).toMatchObject({ status: 201, body: { from_batchref: first.transferid } });
    expect((await patchBatch(first.transferid, { qty: 5, eta: '2027-01-01' })).status).toBe(200);

    expect(await deleteTransfer(first.transferid)).toMatchObject({ status: 409, body: { message: expect.stringContaining('was changed since it was made') } });
    expect((await deleteTransfer(onward.transferid)).status).toBe(204);
    expect((await getBatch(first.transferid)).body).toMatchObject({ qty: 7, available: 7 });
    await noViolations();
  });

  it('answers 409 once a line is on the incoming batch, and once it is received; 404 for a transfer never made', async () => {
    const { sku } = await stockAtDefault(10);
    const [taken, received] = [transferOf(sku, 3), transferOf(sku, 3)];
    await postTransfer(taken);
    await postTransfer(received);
    const allocated = await context.service.invoke(routeEvent('POST /allocate', { body: { orderid: uniqueId('order'), sku, qty: 3, location: 'lyon' } }));
    const [lined, other] = JSON.stringify(allocated.body).includes(taken.transferid) ? [taken, received] : [received, taken];
    expect(await deleteTransfer(lined.transferid)).toMatchObject({ status: 409, body: { message: expect.stringContaining('cannot be cancelled: lines have units') } });
    expect((await patchBatch(other.transferid, { eta: null })).status).toBe(200);
    expect(await deleteTransfer(other.transferid)).toMatchObject({ status: 409, body: { message: expect.stringContaining('has been received') } });
    expect((await deleteTransfer(uniqueId('transfer'))).status).toBe(404);
    await noViolations();
  });
});

describe('races', () => {
  it('a transfer racing allocations for the last units never oversells: the units are either moved or allocated, once', async () => {
    for (let round = 0; round < 5; round++) {
      const { sku, ref } = await stockAtDefault(6);
      const transfer = transferOf(sku, 3);
      const answers = await Promise.all([
        postTransfer(transfer),
        // Routed to default: a line with no routing may go to the transfer's incoming batch once it is made.
        ...Array.from({ length: 3 }, () => context.service.allocate({ orderid: uniqueId('order'), sku, qty: 2, location: 'default' })),
      ]);
      const moved = answers[0]?.status === 201 ? 3 : 0;
      const allocated = answers.slice(1).filter(({ status }) => status === 201).length * 2;
      expect(answers[0]?.status === 201 || answers[0]?.status === 400).toBe(true);
      expect(moved + allocated).toBeLessThanOrEqual(6);
      expect((await getBatch(ref)).body).toMatchObject({ qty: 6 - moved, allocated, available: 6 - moved - allocated });
    }
    await noViolations();
  });

  it('a cancel racing an allocation onto the incoming batch: exactly one wins, and the units are exact', async () => {
    for (let round = 0; round < 5; round++) {
      const { sku, ref } = await stockAtDefault(4);
      const transfer = transferOf(sku, 4);
      await postTransfer(transfer);
      const [cancel, allocation] = await Promise.all([
        deleteTransfer(transfer.transferid),
        context.service.invoke(routeEvent('POST /allocate', { body: { orderid: uniqueId('order'), sku, qty: 1, location: 'lyon' } })),
      ]);
      expect([cancel.status, allocation.status].sort()).toEqual(cancel.status === 204 ? [204, 400] : [201, 409]);
      if (cancel.status === 204) {
        expect((await getBatch(ref)).body).toMatchObject({ qty: 4, available: 4 });
        expect((await getBatch(transfer.transferid)).status).toBe(404);
      } else {
        expect((await getBatch(ref)).body).toMatchObject({ qty: 0 });
        expect((await getBatch(transfer.transferid)).body).toMatchObject({ qty: 4, allocated: 1, available: 3 });
      }
    }
    await noViolations();
  });
});
