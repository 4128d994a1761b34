import type { DomainEvent } from '../../domain/events';
import { type LinePart, partsOf } from '../../domain/model';
import type { Inventory } from '../invariants';
import type { Failure } from './judge';

/*
 * The events a run published, held against what it stored: replayed in the stream's order into a
 * ledger of lines (their units leaving with shipments), holds, transfers and batches' quantities,
 * they must never allocate a line twice, ship units a line does not hold, end a hold twice or
 * cancel a transfer twice, and must end where the table ends. So every change
 * was announced once, and nothing was announced that did not happen.
 */

const rule = 'events-agree';

export const judgeEvents = (events: readonly DomainEvent[], inventory: Inventory): Failure[] => {
  const failures: Failure[] = [];
  const fail = (message: string) => failures.push({ rule, message });
  /** Each line's units on each batch, as its events leave them: a whole line on one, a split line's parts on theirs. */
  const lines = new Map<string, Map<string, number>>();
  const shown = (line: string) => {
    const units = lines.get(line);
    return units ? `on ${[...units].map(([batchref, qty]) => `${batchref} (${qty})`).join(', ')}` : 'not allocated';
  };
  const holds = new Map<string, 'active' | 'ended'>();
  const transfers = new Map<string, 'active' | 'cancelled'>();
  const quantities = new Map<string, number>();

  for (const { name, detail } of events) {
    switch (name) {
      case 'Allocated': {
        // A split line's part adds to the units its line has, never past the line's qty; a whole line comes to none.
        const line = `${detail.orderid}/${detail.sku}`;
        const units = lines.get(line) ?? new Map<string, number>();
        const before = [...units.values()].reduce((sum, qty) => sum + qty, 0);
        if (detail.line_qty === undefined ? units.size > 0 : before + detail.qty > detail.line_qty) {
          fail(`${detail.id}: Allocated ${line} on ${detail.batchref} (${detail.qty}), while it was ${shown(line)}`);
        }
        units.set(detail.batchref, (units.get(detail.batchref) ?? 0) + detail.qty);
        lines.set(line, units);
        break;
      }
      case 'Deallocated': {
        const line = `${detail.orderid}/${detail.sku}`;
        const units = lines.get(line);
        const left = (units?.get(detail.batchref) ?? 0) - detail.qty;
        if (left < 0 || (detail.line_qty === undefined && units?.size !== 1)) fail(`${detail.id}: Deallocated ${line} from ${detail.batchref} (${detail.qty}), while it was ${shown(line)}`);
        if (left > 0) units?.set(detail.batchref, left);
        else units?.delete(detail.batchref);
        if (units?.size === 0) lines.delete(line);
        break;
      }
      case 'Shipped':
        // Units that left with a shipment leave their line's batches: the line stays, as what it shipped.
        for (const { sku, parts } of detail.lines) {
          const line = `${detail.orderid}/${sku}`;
          const units = lines.get(line) ?? new Map<string, number>();
          for (const { batchref, qty } of parts) {
            const left = (units.get(batchref) ?? 0) - qty;
            if (left < 0) fail(`${detail.id}: Shipped ${line} from ${batchref} (${qty}), while it was ${shown(line)}`);
            if (left > 0) units.set(batchref, left);
            else units.delete(batchref);
          }
          lines.set(line, units);
        }
        break;
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

  // A line that shipped its units, or gave back the rest, stays holding none.
  const stored = new Map(inventory.lines.map((line) => [`${line.orderid}/${line.sku}`, partsOf(line).filter(({ qty }) => qty > 0)]));
  const sameUnits = (parts: readonly LinePart[], units: ReadonlyMap<string, number> | undefined) =>
    (units?.size ?? 0) === parts.length && parts.every(({ batchref, qty }) => units?.get(batchref) === qty);
  for (const [line, parts] of stored) {
    if (!sameUnits(parts, lines.get(line))) fail(`the line ${line} is stored on ${parts.map(({ batchref, qty }) => `${batchref} (${qty})`).join(', ')}, and its events leave it ${shown(line)}`);
  }
  for (const [line, units] of lines) if (!stored.has(line) && units.size > 0) fail(`the events leave the line ${line} ${shown(line)}, which is not stored`);
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
