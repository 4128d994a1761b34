import type { DomainEvent } from '../../domain/events';
import type { Inventory } from '../invariants';
import type { Failure } from './judge';

/*
 * The events a run published, held against what it stored: replayed in the stream's order into a
 * ledger of lines, holds, transfers and batches' quantities, they must never allocate a line twice,
 * end a hold twice or cancel a transfer twice, and must end where the table ends. So every change
 * was announced once, and nothing was announced that did not happen.
 */

const rule = 'events-agree';

export const judgeEvents = (events: readonly DomainEvent[], inventory: Inventory): Failure[] => {
  const failures: Failure[] = [];
  const fail = (message: string) => failures.push({ rule, message });
  const lines = new Map<string, string>();
  const holds = new Map<string, 'active' | 'ended'>();
  const transfers = new Map<string, 'active' | 'cancelled'>();
  const quantities = new Map<string, number>();

  for (const { name, detail } of events) {
    switch (name) {
      case 'Allocated': {
        const line = `${detail.orderid}/${detail.sku}`;
        if (lines.has(line)) fail(`${detail.id}: Allocated ${line} on ${detail.batchref}, while it was on ${lines.get(line)}`);
        lines.set(line, detail.batchref);
        break;
      }
      case 'Deallocated': {
        const line = `${detail.orderid}/${detail.sku}`;
        if (lines.get(line) !== detail.batchref) fail(`${detail.id}: Deallocated ${line} from ${detail.batchref}, while it was ${lines.has(line) ? `on ${lines.get(line)}` : 'not allocated'}`);
        lines.delete(line);
        break;
      }
      case 'HoldPlaced':
        if (holds.has(detail.holdid)) fail(`${detail.id}: HoldPlaced ${detail.holdid} a second time`);
        holds.set(detail.holdid, 'active');
        break;
      case 'HoldExtended':
        if (holds.get(detail.holdid) !== 'active') fail(`${detail.id}: HoldExtended ${detail.holdid}, which was ${holds.get(detail.holdid) ?? 'never placed'}`);
        break;
      case 'HoldReleased':
      case 'HoldConfirmed':
        if (holds.get(detail.holdid) !== 'active') fail(`${detail.id}: ${name} ${detail.holdid}, which was ${holds.get(detail.holdid) ?? 'never placed'}`);
        holds.set(detail.holdid, 'ended');
        break;
      case 'TransferCreated':
        if (transfers.has(detail.transferid)) fail(`${detail.id}: TransferCreated ${detail.transferid} a second time`);
        transfers.set(detail.transferid, 'active');
        break;
      case 'TransferCancelled':
        if (transfers.get(detail.transferid) !== 'active') fail(`${detail.id}: TransferCancelled ${detail.transferid}, which was ${transfers.get(detail.transferid) ?? 'never made'}`);
        transfers.set(detail.transferid, 'cancelled');
        break;
      case 'BatchAdded':
      case 'BatchChanged':
        quantities.set(detail.ref, detail.qty);
        break;
    }
  }

  const stored = new Map(inventory.lines.map(({ orderid, sku, batchref }) => [`${orderid}/${sku}`, batchref]));
  for (const [line, batchref] of stored) if (lines.get(line) !== batchref) fail(`the line ${line} is stored on ${batchref}, and its events leave it ${lines.has(line) ? `on ${lines.get(line)}` : 'not allocated'}`);
  for (const [line, batchref] of lines) if (!stored.has(line)) fail(`the events leave the line ${line} on ${batchref}, which is not stored`);
  for (const hold of inventory.holds) {
    const announced = holds.get(hold.holdid);
    if ((hold.status === 'active') !== (announced === 'active')) fail(`hold ${hold.holdid} is stored ${hold.status}, and its events leave it ${announced ?? 'never placed'}`);
  }
  for (const transfer of inventory.transfers) {
    if (transfers.get(transfer.transferid) !== transfer.status) fail(`transfer ${transfer.transferid} is stored ${transfer.status}, and its events leave it ${transfers.get(transfer.transferid) ?? 'never made'}`);
  }
  for (const batch of inventory.batches) {
    if (quantities.get(batch.ref) !== batch.qty) fail(`batch ${batch.ref} is stored with qty ${batch.qty}, and its events leave it ${quantities.get(batch.ref) ?? 'never added'}`);
  }
  return failures;
};
