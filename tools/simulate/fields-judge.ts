import { type Hold, linesOfHold, statusAt } from '../../domain/holds';
import { type Allocation, locationOf, orderedQtyOf, partsOf } from '../../domain/model';
import { type Shipment, isSameShipment, placedParts, shippedQtyOf } from '../../domain/shipments';
import { batchReferenceKey } from '../../functions/store/batches';
import { holdKey } from '../../functions/store/holds';
import { lineKey } from '../../functions/store/lines';
import { shipmentKey } from '../../functions/store/shipments';
import { transferKey } from '../../functions/store/transfers';
import type { Inventory } from '../invariants';
import type { Failure } from './judge';
import type { Moment } from './model-judge';
import { type Answer, type Reached, bodyOf, keyText } from './observed';

/*
 * Every field of an answer that the table can say: what a read answered, the table held at some
 * moment while the read ran; what a write answered (made or a repeat, where each unit is, what
 * shipped), the table holds or held at the moments around its commit. The run reads the table after
 * each commit (./simulation.ts), so each moment is the table between two commits.
 */

type HttpAnswer = Answer & { readonly send: Extract<Answer['send'], { kind: 'http' }> };
type Body = Record<string, unknown>;
interface PartView {
  readonly batchref: string;
  readonly qty: number;
  readonly location?: string;
  readonly shipped?: number;
}
interface LineView {
  readonly sku: string;
  readonly qty: number;
  readonly batchref?: string;
  readonly location?: string;
  readonly parts?: readonly PartView[];
  readonly shipped?: number;
}

const describe = (answer: HttpAnswer) => `${answer.actor} (${answer.send.routeKey})`;
const same = (one: unknown, other: unknown) => JSON.stringify(one) === JSON.stringify(other);

/** The table as each moment in force over the steps of a request left it, with the run's clock over which it was in force. */
const momentsOver = (timeline: readonly Moment[], answer: Answer): { readonly inventory: Inventory; readonly from: number; readonly to: number }[] => {
  const to = answer.answeredAt ?? Number.MAX_SAFE_INTEGER;
  const endTime = answer.answeredTime ?? Number.MAX_SAFE_INTEGER;
  return timeline.flatMap(({ step, at, inventory }, index) => {
    const next = timeline[index + 1];
    if (step > to || (next?.step ?? Number.MAX_SAFE_INTEGER) <= answer.sentAt) return [];
    return [{ inventory, from: Math.max(at, answer.sentTime), to: Math.min(next?.at ?? Number.MAX_SAFE_INTEGER, endTime) }];
  });
};

/** A line as an order's answer shows it (docs/api.md, "GET /allocations/{orderid}"), as the judge compares it: its units by batch, what it shipped. */
const orderLineShown = (line: Allocation) => ({
  sku: line.sku,
  qty: orderedQtyOf(line),
  shipped: shippedQtyOf(line),
  parts: line.split ? placedParts(line).map(({ batchref, qty, shipped }) => [batchref, qty, shipped]) : [[line.batchref, orderedQtyOf(line), shippedQtyOf(line)]],
});
const orderLineAnswered = (line: LineView) => ({
  sku: line.sku,
  qty: line.qty,
  shipped: line.shipped ?? 0,
  parts: line.parts ? line.parts.map(({ batchref, qty, shipped = 0 }) => [batchref, qty, shipped]) : [[line.batchref, line.qty, line.shipped ?? 0]],
});

/** A hold's line as the judge compares it: its units by batch. */
const holdLineShown = ({ sku, qty, batchref, split }: Allocation) => ({ sku, qty, parts: (split?.parts ?? [{ batchref, qty }]).map((part) => [part.batchref, part.qty]) });
const holdLineAnswered = ({ sku, qty, batchref, parts }: LineView) => ({ sku, qty, parts: (parts ?? [{ batchref, qty }]).map((part) => [part.batchref, part.qty]) });

const shipmentShown = ({ shipmentid, orderid, location, shippedAt, lines }: Shipment) => ({
  shipmentid,
  orderid,
  location,
  shipped_at: shippedAt,
  lines: lines.map(({ sku, qty, parts }) => ({ sku, qty, parts: parts.map((part) => ({ batchref: part.batchref, qty: part.qty })) })),
});

/** The statuses a hold stored so had over the run's clock from `from` to `to`: an active one expires as its time passes. */
const statusesOver = (hold: Hold, from: number, to: number) => new Set([statusAt(hold, from), statusAt(hold, to)]);

export const judgeFields = (answers: readonly Answer[], reached: readonly Reached[], timeline: readonly Moment[]): Failure[] => {
  const failures: Failure[] = [];
  const fail = (rule: string, answer: HttpAnswer, message: string) => failures.push({ rule, message: `${describe(answer)} answered ${answer.status} ${message}` });
  const http = answers.filter((answer): answer is HttpAnswer => answer.send.kind === 'http' && answer.answeredAt !== undefined);
  const final = timeline.at(-1)?.inventory;
  if (!final) return failures;

  // A batch never moves: the places it is at in any moment are the only ones an answer may name for it.
  const placesOf = new Map<string, Set<string>>();
  for (const { inventory } of timeline) for (const batch of inventory.batches) placesOf.set(batch.ref, (placesOf.get(batch.ref) ?? new Set()).add(locationOf(batch)));
  const checkPlace = (answer: HttpAnswer, batchref: string | undefined, location: string | undefined, what: string) => {
    const places = batchref === undefined ? undefined : placesOf.get(batchref);
    if (places && location !== undefined && !places.has(location)) fail('location-as-stored', answer, `${what} on ${batchref} at ${location}, which is at ${[...places].join(', ')}`);
  };
  const checkLinePlaces = (answer: HttpAnswer, lines: readonly LineView[]) => {
    for (const line of lines) {
      checkPlace(answer, line.batchref, line.location, `the line ${line.sku}`);
      for (const part of line.parts ?? []) checkPlace(answer, part.batchref, part.location, `a part of the line ${line.sku}`);
    }
  };

  // Whether a request sent by an actor could make the item: a line, a hold, a transfer, a batch, a shipment.
  const makersOf = (key: string): Set<string> => {
    // Every placing of the hold, answered or not: one whose answer was lost may be the one that stored it.
    const heldSkus = (holdid: string) =>
      answers
        .flatMap(({ send }) => (send.kind === 'http' && send.routeKey === 'POST /holds' && (send.body as Body).holdid === holdid ? ((send.body as { lines?: { sku: string }[] }).lines ?? []) : []))
        .map(({ sku }) => sku);
    return new Set(
      answers
        .filter(({ send }) => {
          if (send.kind !== 'http') return false;
          const body = (send.body ?? {}) as { orderid?: string; sku?: string; lines?: { sku: string }[]; holdid?: string; transferid?: string; ref?: string; shipmentid?: string };
          switch (send.routeKey) {
            case 'POST /allocate':
              return key === keyText(lineKey(String(body.orderid), String(body.sku)));
            case 'POST /orders':
              return (body.lines ?? []).some(({ sku }) => key === keyText(lineKey(String(body.orderid), sku)));
            case 'POST /holds/{holdid}/confirm':
              return heldSkus(String(send.path?.holdid)).some((sku) => key === keyText(lineKey(String(body.orderid), sku)));
            case 'POST /holds':
              return key === keyText(holdKey(String(body.holdid)));
            case 'POST /transfers':
              return key === keyText(transferKey(String(body.transferid))) || key === keyText(batchReferenceKey(String(body.transferid)));
            case 'POST /add_batch':
              return key === keyText(batchReferenceKey(String(body.ref)));
            case 'POST /shipments':
              return key === keyText(shipmentKey(String(body.shipmentid)));
            default:
              return false;
          }
        })
        .map(({ actor }) => actor),
    );
  };
  const commitsOf = (key: string) => reached.filter(({ committed, items }) => committed && items.includes(key));
  /**
   * A 201 made what it names: a commit wrote it while the request ran (in a shared process, maybe
   * another request's grouped take). A 200 is a repeat: another request that could make it wrote it
   * first, and this one wrote it in no commit whose answer it got (one whose answer was lost, it may
   * find again and answer as a repeat).
   */
  const checkMade = (answer: HttpAnswer, keys: readonly Record<string, unknown>[], what: string, repeatMayWrite = false) => {
    const texts = keys.map(keyText);
    const to = answer.answeredAt ?? 0;
    if (answer.status === 201 && !texts.some((key) => commitsOf(key).some(({ step }) => step >= answer.sentAt && step <= to))) {
      fail('created-answers-201', answer, `for ${what}, though no commit wrote it while it ran`);
    }
    if (answer.status !== 200) return;
    const ownCommit = texts.map((key) => commitsOf(key).find(({ actor, step }) => actor === answer.actor && !answer.faultsAt.includes(step))).find(Boolean);
    if (ownCommit && !repeatMayWrite) fail('created-answers-201', answer, `as a repeat for ${what}, though it wrote it itself at step ${ownCommit.step}`);
    const earlier = texts.every((key) => {
      const makers = makersOf(key);
      return commitsOf(key).some(({ actor, step }) => actor !== answer.actor && makers.has(actor) && step <= to);
    });
    if (!earlier) fail('created-answers-201', answer, `as a repeat for ${what}, though no other request that could make it wrote it first`);
  };

  for (const answer of http) {
    const { status = 0 } = answer;
    if (status >= 500) continue;
    const body = bodyOf(answer);
    const sent = (answer.send.body ?? {}) as Body;
    const path = answer.send.path ?? {};
    const moments = momentsOver(timeline, answer);
    const someMoment = (holds: (inventory: Inventory, from: number, to: number) => boolean) => moments.some(({ inventory, from, to }) => holds(inventory, from, to));
    switch (answer.send.routeKey) {
      case 'POST /allocate': {
        const { orderid, sku } = sent as { orderid: string; sku: string };
        if (status !== 200 && status !== 201) break;
        checkMade(answer, [lineKey(orderid, sku)], `the line ${orderid}/${sku}`);
        checkLinePlaces(answer, [{ sku, qty: Number(sent.qty), ...(body as object) } as LineView]);
        break;
      }
      case 'POST /orders':
      case 'POST /holds/{holdid}/confirm': {
        if (status !== 200 && status !== 201) break;
        const orderid = String(sent.orderid);
        const lines = (body.lines ?? []) as LineView[];
        checkLinePlaces(answer, lines);
        const keys = lines.map(({ sku }) => lineKey(orderid, sku));
        if (answer.send.routeKey === 'POST /orders') {
          // An order is new if any of its lines is: a repeat, only if every one is.
          if (status === 201) checkMade(answer, keys, `the order ${orderid}`);
          else for (const { sku } of lines) checkMade(answer, [lineKey(orderid, sku)], `the line ${orderid}/${sku}`);
        } else checkMade(answer, keys, `the order ${orderid} confirmed from hold ${path.holdid}`);
        break;
      }
      case 'POST /holds':
      case 'PATCH /holds/{holdid}':
      case 'GET /holds/{holdid}': {
        const holdid = String(answer.send.routeKey === 'POST /holds' ? sent.holdid : path.holdid);
        if (answer.send.routeKey === 'POST /holds' && (status === 200 || status === 201)) checkMade(answer, [holdKey(holdid)], `hold ${holdid}`, true);
        if (status === 200 || status === 201) checkLinePlaces(answer, (body.lines ?? []) as LineView[]);
        if (answer.send.routeKey !== 'GET /holds/{holdid}') break;
        if (status === 404 && !someMoment((inventory) => !inventory.holds.some((hold) => hold.holdid === holdid))) fail('read-was-true', answer, `for hold ${holdid}, which was stored throughout`);
        if (status !== 200) break;
        const answered = { status: body.status, expires_at: body.expires_at, orderid: body.orderid, lines: ((body.lines ?? []) as LineView[]).map(holdLineAnswered) };
        const asAt = someMoment((inventory, from, to) => {
          const hold = inventory.holds.find((stored) => stored.holdid === holdid);
          return (
            hold !== undefined &&
            statusesOver(hold, from, to).has(body.status as Hold['status']) &&
            same([answered.expires_at, answered.orderid, answered.lines], [hold.expiresAt, hold.orderid, linesOfHold(hold).map(holdLineShown)])
          );
        });
        if (!asAt) fail('read-was-true', answer, `hold ${holdid} ${answered.status} until ${answered.expires_at}${answered.orderid ? ` to ${answered.orderid}` : ''} with ${JSON.stringify(answered.lines)}, which it was at no moment of the read`);
        break;
      }
      case 'GET /allocations/{orderid}': {
        const orderid = path.orderid ?? '';
        const linesAt = (inventory: Inventory) => inventory.lines.filter((line) => line.orderid === orderid).sort((one, other) => (one.sku < other.sku ? -1 : 1));
        if (status === 404 && !someMoment((inventory) => linesAt(inventory).length === 0)) fail('read-was-true', answer, `for order ${orderid}, which had lines throughout`);
        if (status !== 200) break;
        const lines = (body.lines ?? []) as LineView[];
        checkLinePlaces(answer, lines);
        const answered = lines.map(orderLineAnswered);
        if (!someMoment((inventory) => same(answered, linesAt(inventory).map(orderLineShown)))) {
          fail('read-was-true', answer, `the order ${orderid} as ${JSON.stringify(answered)}, which it was at no moment of the read`);
        }
        break;
      }
      case 'GET /batches/{ref}': {
        const ref = path.ref ?? '';
        if (status !== 200) break;
        const { sku, qty, eta, location, allocated, held, available } = body as { sku: string; qty: number; eta: string | null; location: string; allocated: number; held: number; available: number };
        checkPlace(answer, ref, location, 'batch');
        const asAt = someMoment((inventory) => inventory.batches.some((batch) => batch.ref === ref && batch.sku === sku && batch.qty === qty && batch.eta === eta));
        if (!asAt) fail('read-was-true', answer, `batch ${ref} of ${sku} with qty ${qty} and eta ${eta}, which it had at no moment of the read`);
        if (allocated <= qty ? available + allocated + held !== qty : available !== 0) fail('read-was-true', answer, `batch ${ref} with qty ${qty}, available ${available}, allocated ${allocated} and held ${held}, which do not add up`);
        break;
      }
      case 'GET /skus/{sku}/stock': {
        if (status !== 200) break;
        const { in_stock: inStock, incoming, held, batches = [] } = body as { in_stock: number; incoming: number; held: number; batches?: { ref: string; qty: number; held: number; available: number; eta: string | null }[] };
        const sum = (some: typeof batches, field: 'available' | 'held') => some.reduce((total, batch) => total + batch[field], 0);
        const [onShelf, onTheWay] = [batches.filter(({ eta }) => eta === null), batches.filter(({ eta }) => eta !== null)];
        if (sum(onShelf, 'available') !== inStock || sum(onTheWay, 'available') !== incoming || sum(batches, 'held') !== held) {
          fail('read-was-true', answer, `the stock of ${path.sku} in_stock ${inStock}, incoming ${incoming} and held ${held}, which its batches do not add up to`);
        }
        for (const { ref, qty, eta } of batches) {
          if (!someMoment((inventory) => inventory.batches.some((batch) => batch.ref === ref && batch.sku === path.sku && batch.qty === qty && batch.eta === eta))) {
            fail('read-was-true', answer, `the stock of ${path.sku} with batch ${ref} of qty ${qty} and eta ${eta}, which it had at no moment of the read`);
          }
        }
        break;
      }
      case 'GET /shipments/{shipmentid}': {
        const shipmentid = path.shipmentid ?? '';
        if (status === 404 && !someMoment((inventory) => !inventory.shipments.some((shipment) => shipment.shipmentid === shipmentid))) fail('read-was-true', answer, `for shipment ${shipmentid}, which was stored throughout`);
        const stored = final.shipments.find((shipment) => shipment.shipmentid === shipmentid);
        if (status === 200 && !same(body, stored && shipmentShown(stored))) fail('shipment-as-stored', answer, `shipment ${shipmentid} as ${answer.body}, which is stored ${stored ? JSON.stringify(shipmentShown(stored)) : 'nowhere'}`);
        break;
      }
      case 'POST /shipments':
        judgeShipment(answer, body, moments, final, timeline, (rule, message) => fail(rule, answer, message), checkMade);
        break;
    }
  }
  return failures;
};

type ShipmentAsked = { shipmentid: string; orderid: string; location?: string; lines: { sku: string; qty: number }[] };

/** A line's units not yet shipped at `location` at a moment: its parts there (a whole line's one part is its batch, at the batch's place). */
const unshippedAt = (inventory: Inventory, line: Allocation, location: string) =>
  partsOf(line)
    .map((part) => ({ ...part, place: line.split ? part.location : locationOf(inventory.batches.find(({ ref }) => ref === part.batchref) ?? {}) }))
    .reduce((sum, part) => (part.place === location ? sum + part.qty : sum), 0);

/** The units a line shipped from a batch at a moment. */
const shippedFrom = (line: Allocation | undefined, batchref: string) => line?.shipped?.find((units) => units.batchref === batchref)?.qty ?? 0;

/**
 * A shipment's answer: a 201 or a 200 is the shipment stored, for what was asked, each part's units
 * taken from a batch at its place that the line held them on just before its commit, and shipped by
 * it (no unit shipped twice, none from a batch that lacked it); each refusal was true at some moment.
 */
const judgeShipment = (
  answer: HttpAnswer,
  body: Body,
  moments: readonly { readonly inventory: Inventory }[],
  final: Inventory,
  timeline: readonly Moment[],
  fail: (rule: string, message: string) => void,
  checkMade: (answer: HttpAnswer, keys: readonly Record<string, unknown>[], what: string) => void,
) => {
  const asked = answer.send.body as ShipmentAsked;
  const { status = 0 } = answer;
  const storedAt = (inventory: Inventory) => inventory.shipments.find((shipment) => shipment.shipmentid === asked.shipmentid);
  const linesOf = (inventory: Inventory) => inventory.lines.filter((line) => line.orderid === asked.orderid);
  const someMoment = (holds: (inventory: Inventory) => boolean) => moments.some(({ inventory }) => holds(inventory));
  const stored = storedAt(final);
  if (status === 200 || status === 201) {
    checkMade(answer, [shipmentKey(asked.shipmentid)], `shipment ${asked.shipmentid}`);
    if (!stored || !same(body, shipmentShown(stored))) return fail('shipment-as-stored', `shipment ${asked.shipmentid} as ${answer.body}, which is stored ${stored ? JSON.stringify(shipmentShown(stored)) : 'nowhere'}`);
    if (!isSameShipment(stored, asked)) return fail('shipment-as-stored', `shipment ${asked.shipmentid} for ${JSON.stringify(asked)}, which is stored for another order, lines or place`);
    const made = timeline.findIndex((moment) => storedAt(moment.inventory) !== undefined);
    const [before, after] = [timeline[made - 1]?.inventory, timeline[made]?.inventory];
    if (!before || !after) return;
    // Each batch's qty falls by the units that left it, in the shipment's own commit.
    const fromBatch = new Map<string, number>();
    for (const { batchref, qty } of stored.lines.flatMap(({ parts }) => parts)) fromBatch.set(batchref, (fromBatch.get(batchref) ?? 0) + qty);
    for (const [batchref, qty] of fromBatch) {
      const [was = 0, is = 0] = [before, after].map((inventory) => inventory.batches.find(({ ref }) => ref === batchref)?.qty);
      if (was - is !== qty) fail('shipped-once', `${qty} units from ${batchref}, whose qty went from ${was} to ${is} as the shipment was written`);
    }
    for (const line of stored.lines) {
      if (line.parts.reduce((sum, { qty }) => sum + qty, 0) !== line.qty) fail('shipped-once', `the line ${line.sku} of ${line.qty} units from parts ${JSON.stringify(line.parts)}, which do not add up`);
      const [was, is] = [before, after].map((inventory) => inventory.lines.find((stored) => stored.orderid === asked.orderid && stored.sku === line.sku));
      for (const { batchref, qty } of line.parts) {
        const batchWas = before.batches.find(({ ref }) => ref === batchref);
        const place = locationOf(batchWas ?? {});
        const onShelf = batchWas?.qty ?? 0;
        if (onShelf < qty) fail('shipped-once', `${qty} of ${line.sku} from ${batchref}, whose qty was ${onShelf} before the shipment was written`);
        const held = was ? partsOf(was).find((part) => part.batchref === batchref)?.qty ?? 0 : 0;
        if (place !== stored.location) fail('shipped-once', `${qty} of ${line.sku} from ${batchref}, at ${place}, in a shipment from ${stored.location}`);
        if (held < qty) fail('shipped-once', `${qty} of ${line.sku} from ${batchref}, on which the line held ${held} before the shipment was written`);
        if (shippedFrom(is, batchref) - shippedFrom(was, batchref) !== qty) {
          fail('shipped-once', `${qty} of ${line.sku} from ${batchref}, where the line's shipped units went from ${shippedFrom(was, batchref)} to ${shippedFrom(is, batchref)} as the shipment was written`);
        }
      }
    }
    return;
  }
  const code = body.code;
  if (status === 409 && code === 'shipment_exists' && !someMoment((inventory) => { const other = storedAt(inventory); return other !== undefined && !isSameShipment(other, asked); })) {
    fail('refusal-was-true', `shipment_exists, though no other shipment was stored as ${asked.shipmentid} while it ran`);
  }
  if (status === 409 && code === 'too_few_unshipped') {
    const location = String(body.location);
    const short = (body.lines ?? []) as { sku: string; qty: number; unshipped: number }[];
    const trueAt = (inventory: Inventory) =>
      storedAt(inventory) === undefined &&
      asked.lines.every(({ sku, qty }) => {
        const line = linesOf(inventory).find((stored) => stored.sku === sku);
        const left = line ? unshippedAt(inventory, line, location) : 0;
        const named = short.find((each) => each.sku === sku);
        return named ? named.qty === qty && named.unshipped === left && left < qty : left >= qty;
      });
    if ((asked.location !== undefined && asked.location !== location) || !someMoment(trueAt)) {
      fail('refusal-was-true', `too_few_unshipped at ${location} for ${JSON.stringify(short)}, which was true at no moment while it ran`);
    }
  }
  if (status === 404 && code === 'unknown_order' && !someMoment((inventory) => linesOf(inventory).length === 0)) fail('refusal-was-true', `unknown_order, though ${asked.orderid} had lines throughout`);
  if (status === 404 && code === 'unknown_line' && !someMoment((inventory) => asked.lines.some(({ sku }) => !linesOf(inventory).some((line) => line.sku === sku)))) {
    fail('refusal-was-true', `unknown_line, though ${asked.orderid} had a line of every SKU asked throughout`);
  }
  if (status === 400 && code === 'validation_failed' && (body.issues as { path: string }[] | undefined)?.some(({ path }) => path === 'location')) {
    const places = (inventory: Inventory) => new Set(linesOf(inventory).flatMap((line) => partsOf(line).filter(({ qty }) => qty > 0).map((part) => (line.split ? part.location : locationOf(inventory.batches.find(({ ref }) => ref === part.batchref) ?? {})))));
    if (asked.location !== undefined || !someMoment((inventory) => places(inventory).size > 1)) fail('refusal-was-true', `naming location, though ${asked.orderid}'s unshipped units were at one place at every moment while it ran`);
  }
};
