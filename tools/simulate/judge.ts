import { linesOfHold } from '../../domain/holds';
import { partsOf } from '../../domain/model';
import { placedParts } from '../../domain/shipments';
import { MAX_PARTS_PER_LINE } from '../../domain/split-lines';
import { PK, SK } from '../../functions/store/fields';
import { batchReferenceKey } from '../../functions/store/batches';
import { holdKey } from '../../functions/store/holds';
import { LOCATIONS_PARTITION } from '../../functions/store/locations';
import { lineKey } from '../../functions/store/lines';
import { MAX_TRANSACTION_ITEMS } from '../../functions/store/store-calls';
import { transferKey } from '../../functions/store/transfers';
import type { Inventory } from '../invariants';
import type { Mode } from './functions';
import { itemsMeet } from './store-seam';
import { type Answer, type FaultMet, type Reached, bodyOf, keyText } from './observed';

/*
 * What a run's clients were told, held against the table at its end and the commits the run made:
 * `npm run check`'s invariants are judged beside these (./simulation.ts). A rule here never blames
 * an answer that a later request could have changed: a line answered is looked for only if nothing
 * sent in the run could have cancelled or moved it.
 */

/**
 * The most items that ending a hold its request placed writes: its record, and per line (a split
 * line's, per part: up to MAX_PARTS_PER_LINE) two records of held units, from its batch's own units
 * and a piece, and a count given back. A hold of two whole lines costs seven, and thirteen of them
 * fit in 100 beside a change's three items. So when a run placed fewer holds than that, and all of
 * them would fit beside the change (a split line's count as many parts as it may have), a change of
 * a batch ends the holds on it in its own write.
 */
const endingItems = (body: unknown): number => {
  const { lines = [], split: holdSplit = 'none' } = (body ?? {}) as { lines?: { split?: string }[]; split?: string };
  return 1 + 3 * lines.reduce((parts, { split = holdSplit }) => parts + (split === 'none' ? 1 : MAX_PARTS_PER_LINE), 0);
};
const CHANGE_ITEMS = 3;
const HOLDS_ONE_CHANGE_ENDS = 13;
const HOLD_PREFIX = String(holdKey('')[PK]);

export interface Failure {
  readonly rule: string;
  readonly message: string;
}

interface Verdict {
  readonly answers: readonly Answer[];
  readonly reached: readonly Reached[];
  readonly faultsMet: readonly FaultMet[];
  readonly inventory: Inventory;
  readonly mode: Mode;
}

type HttpAnswer = Answer & { readonly send: Extract<Answer['send'], { kind: 'http' }> };
type FileImportAnswer = Answer & { readonly send: Extract<Answer['send'], { kind: 'import-file' }> };

const field = (value: unknown, name: string): string => String((value as Record<string, unknown> | undefined)?.[name] ?? '');
const describe = (answer: Answer) => `${answer.actor} (${answer.send.kind === 'http' ? answer.send.routeKey : answer.send.kind})`;

export const judge = ({ answers, reached, faultsMet, inventory, mode }: Verdict): Failure[] => {
  const failures: Failure[] = [];
  const commits = reached.filter(({ committed }) => committed);
  const http = answers.filter((answer): answer is HttpAnswer => answer.send.kind === 'http');
  const fileImports = answers.filter((answer): answer is FileImportAnswer => answer.send.kind === 'import-file');
  const routeOf = (answer: HttpAnswer) => answer.send.routeKey;
  const pathOf = (answer: HttpAnswer, name: string) => answer.send.path?.[name] ?? '';
  /** The rows of an import, sent inline or in a file the engine ran. */
  const importRowsOf = (answer: HttpAnswer | FileImportAnswer): readonly unknown[] =>
    answer.send.kind === 'import-file' ? answer.send.rows : answer.send.routeKey === 'POST /imports' ? ((answer.send.body as { rows?: unknown[] } | undefined)?.rows ?? []) : [];
  const skuOfRef = new Map(inventory.batches.map(({ ref, sku }) => [ref, sku]));
  // A batch gone by the end (a cancelled transfer's incoming one) is known by what added it.
  for (const answer of [...http, ...fileImports]) {
    if (answer.send.kind === 'http' && answer.send.routeKey === 'POST /add_batch' && (answer.status ?? 0) < 300 && !skuOfRef.has(field(answer.send.body, 'ref'))) skuOfRef.set(field(answer.send.body, 'ref'), field(answer.send.body, 'sku'));
    for (const row of importRowsOf(answer)) if (field(row, 'ref') !== '' && field(row, 'sku') !== '' && !skuOfRef.has(field(row, 'ref'))) skuOfRef.set(field(row, 'ref'), field(row, 'sku'));
  }
  /** Sends that were not over before `answer` was sent: what might have changed the table after it. */
  const after = (answer: Answer) => http.filter((other) => other !== answer && (other.answeredAt ?? Number.MAX_SAFE_INTEGER) >= answer.sentAt);
  /** The batches an import's row may change: the batch it names, or, a count at a place, every batch of its SKU. */
  const rowRefs = (row: unknown): string[] =>
    field(row, 'ref') !== '' ? [field(row, 'ref')] : field(row, 'on_hand') !== '' ? [...skuOfRef].flatMap(([ref, sku]) => (sku === field(row, 'sku') ? [ref] : [])) : [];
  /** The batches a change of a batch's qty names: a PATCH's path, an adjustment's body, an import's rows. */
  const changedRefs = (other: HttpAnswer | FileImportAnswer): string[] => {
    if (other.send.kind === 'http' && routeOf(other as HttpAnswer) === 'PATCH /batches/{ref}') return [pathOf(other as HttpAnswer, 'ref')];
    if (other.send.kind === 'http' && routeOf(other as HttpAnswer) === 'POST /adjustments') return [field(other.send.body, 'ref')];
    return importRowsOf(other).flatMap(rowRefs);
  };
  /** Whether anything sent after `answer` might cancel, move or take off its order the line (orderid, sku). */
  const changesLine = (other: HttpAnswer | FileImportAnswer, orderid: string, sku: string) =>
    (other.send.kind === 'http' && routeOf(other as HttpAnswer) === 'DELETE /allocations/{orderid}/{sku}' && pathOf(other as HttpAnswer, 'orderid') === orderid && pathOf(other as HttpAnswer, 'sku') === sku) ||
    changedRefs(other).some((changed) => [sku, undefined].includes(skuOfRef.get(changed)));
  /** Whether a request that may cancel or move the line (orderid, sku) wrote anything between two steps. */
  const lineChangedBetween = (orderid: string, sku: string, from: number, to: number) => {
    const changers = new Set([...http, ...fileImports].filter((other) => changesLine(other, orderid, sku)).map(({ actor }) => actor));
    return commits.some((commit) => changers.has(commit.actor) && commit.step > from && commit.step < to);
  };
  const lineMayHaveChanged = (answer: Answer, orderid: string, sku: string) =>
    [...after(answer), ...fileImports.filter((other) => (other.answeredAt ?? Number.MAX_SAFE_INTEGER) >= answer.sentAt)].some((other) => changesLine(other, orderid, sku));
  const lineOf = (orderid: string, sku: string) => inventory.lines.find((line) => line.orderid === orderid && line.sku === sku);
  /** The line answered is stored as answered: on its batch, or, a split line's `parts`, each part's units on its batch. */
  const expectLine = (answer: Answer, orderid: string, sku: string, batchref: string, parts?: readonly { batchref: string; qty: number }[]) => {
    if (lineMayHaveChanged(answer, orderid, sku)) return;
    const line = lineOf(orderid, sku);
    // A part that shipped all its units is shown after the rest: parts are compared in any order.
    const where = (some: readonly { batchref: string; qty: number }[]) =>
      some
        .map((part) => `${part.batchref} (${part.qty})`)
        .sort()
        .join(', ');
    const answered = parts ? where(parts) : batchref;
    // Units that shipped since are still the line's, as its answer counted them.
    const stored = line && (parts ? where(line.split ? placedParts(line) : partsOf(line)) : line.batchref);
    if (!line) failures.push({ rule: 'answer-holds', message: `${describe(answer)} answered ${answer.status} for the line ${orderid}/${sku} on ${answered}, which is not stored` });
    else if (stored !== answered) failures.push({ rule: 'answer-holds', message: `${describe(answer)} answered ${answer.status} for the line ${orderid}/${sku} on ${answered}, which is stored on ${stored}` });
  };
  /**
   * The commits on `key` of requests that sent the same thing as `answer` which `answer` met: after
   * such a commit it read, or failed a condition on, an item that commit wrote. What it answered, it
   * answered knowing the same request had been made, and a repeat answers as a repeat.
   */
  const sameCommittedBefore = (answer: HttpAnswer, key: Record<string, unknown>) => {
    const sameSend = JSON.stringify([answer.send.routeKey, answer.send.path, answer.send.body]);
    const same = new Set(http.filter((other) => other !== answer && JSON.stringify([other.send.routeKey, other.send.path, other.send.body]) === sameSend).map(({ actor }) => actor));
    const item = keyText(key);
    const met = reached.filter((call) => call.actor === answer.actor && !call.committed);
    return commits.filter((commit) => same.has(commit.actor) && commit.items.includes(item) && met.some((call) => call.step > commit.step && itemsMeet(call.items, commit.items)));
  };

  /**
   * A 503 is the contract's answer to a store that failed it: a fault on one of its own calls, or,
   * in a process serving many, on a call of another request on the items it was working on (a
   * grouped take it waited for), or on the read of the locations that the process's requests share
   * (one read for those that find its list stale at once).
   */
  const faultExcuses = (answer: Answer): boolean => {
    if (answer.faultsAt.length > 0) return true;
    if (mode !== 'shared') return false;
    const itsItems = [...reached.filter(({ actor }) => actor === answer.actor).flatMap(({ items }) => items), LOCATIONS_PARTITION];
    return faultsMet.some(({ step, items }) => step >= answer.sentAt && step <= (answer.answeredAt ?? Number.MAX_SAFE_INTEGER) && itemsMeet(items, itsItems));
  };

  for (const answer of http) {
    const { status = 0 } = answer;
    const body = bodyOf(answer);
    if (status === 500 || (status >= 500 && !faultExcuses(answer))) {
      failures.push({ rule: 'no-5xx-without-a-fault', message: `${describe(answer)} answered ${status} ${answer.body ?? ''}${status === 500 ? '' : ' though no fault met it or the work it waited on'}` });
    }
    if (answer.answeredAt === undefined && !answer.died) failures.push({ rule: 'every-request-answered', message: `${describe(answer)} never answered` });
    const ok = status === 200 || status === 201;
    switch (routeOf(answer)) {
      case 'POST /allocate': {
        const { orderid, sku } = answer.send.body as { orderid: string; sku: string };
        if (ok) expectLine(answer, orderid, sku, field(body, 'batchref'), body.parts as { batchref: string; qty: number }[] | undefined);
        const first = sameCommittedBefore(answer, lineKey(orderid, sku))[0];
        if ((status === 400 || status === 409) && first && !lineChangedBetween(orderid, sku, first.step, answer.answeredAt ?? 0)) {
          failures.push({ rule: 'repeat-answered-as-repeat', message: `${describe(answer)} answered ${status} ${answer.body}, though the same line was allocated by ${first.actor} at step ${first.step}` });
        }
        break;
      }
      case 'POST /orders':
      case 'POST /holds/{holdid}/confirm': {
        if (routeOf(answer) === 'POST /orders' && (status === 400 || status === 409)) {
          const { orderid, lines } = answer.send.body as { orderid: string; lines: { sku: string }[] };
          const firsts = lines.map(({ sku }) => sameCommittedBefore(answer, lineKey(orderid, sku))[0]);
          const first = firsts[0];
          if (first && firsts.every(Boolean) && !lines.some(({ sku }) => lineChangedBetween(orderid, sku, first.step, answer.answeredAt ?? 0))) {
            failures.push({ rule: 'repeat-answered-as-repeat', message: `${describe(answer)} answered ${status} ${answer.body}, though the same order was allocated by ${first.actor} at step ${first.step}` });
          }
        }
        const confirmed = inventory.holds.find(({ holdid }) => holdid === pathOf(answer, 'holdid'));
        if (routeOf(answer) === 'POST /holds/{holdid}/confirm' && status === 409 && confirmed?.status === 'confirmed' && confirmed.orderid === field(answer.send.body, 'orderid')) {
          const first = sameCommittedBefore(answer, holdKey(pathOf(answer, 'holdid')))[0];
          if (first) failures.push({ rule: 'repeat-answered-as-repeat', message: `${describe(answer)} answered 409 ${answer.body}, though ${first.actor} had confirmed the hold to the same order at step ${first.step}` });
        }
        if (!ok) break;
        const orderid = field(body, 'orderid');
        // A confirm's repeat answers the lines as the hold confirmed them, not as they are now.
        const describesNow = routeOf(answer) === 'POST /orders' || status === 201;
        if (describesNow) {
          for (const line of (body.lines ?? []) as { sku: string; batchref: string; parts?: { batchref: string; qty: number }[] }[]) expectLine(answer, orderid, line.sku, line.batchref, line.parts);
        }
        if (routeOf(answer) === 'POST /holds/{holdid}/confirm') {
          const hold = inventory.holds.find(({ holdid }) => holdid === pathOf(answer, 'holdid'));
          if (hold?.status !== 'confirmed' || hold.orderid !== orderid) {
            failures.push({ rule: 'answer-holds', message: `${describe(answer)} confirmed hold ${pathOf(answer, 'holdid')} to ${orderid}, which is stored ${hold ? `${hold.status}${hold.orderid ? ` to ${hold.orderid}` : ''}` : 'nowhere'}` });
          }
        }
        break;
      }
      case 'POST /holds': {
        if (!ok) break;
        // A hold's lines never change once placed: the stored hold holds each line as answered, a split line on its parts.
        const holdid = field(body, 'holdid');
        const hold = inventory.holds.find((stored) => stored.holdid === holdid);
        const placed = (lines: readonly { sku: string; qty: number; batchref?: string; parts?: readonly { batchref: string; qty: number }[] }[]) =>
          JSON.stringify(lines.map(({ sku, qty, batchref, parts }) => [sku, qty, ...(parts ?? [{ batchref, qty }]).map((part) => `${part.batchref} (${part.qty})`)]));
        const answered = placed((body.lines ?? []) as { sku: string; qty: number; batchref?: string; parts?: { batchref: string; qty: number }[] }[]);
        const stored = hold && placed(linesOfHold(hold).map(({ sku, qty, batchref, split }) => ({ sku, qty, batchref, ...(split ? { parts: split.parts } : {}) })));
        if (stored !== answered) failures.push({ rule: 'answer-holds', message: `${describe(answer)} answered ${status} with the lines ${answered}, where hold ${holdid} is stored ${stored ? `with ${stored}` : 'nowhere'}` });
        break;
      }
      case 'DELETE /holds/{holdid}': {
        const holdid = pathOf(answer, 'holdid');
        const hold = inventory.holds.find((stored) => stored.holdid === holdid);
        if (status === 204 && (hold?.status === 'active' || hold?.status === 'confirmed')) {
          failures.push({ rule: 'answer-holds', message: `${describe(answer)} released hold ${holdid}, which is stored ${hold.status}` });
        }
        if (status === 409 && hold?.status === 'released' && sameCommittedBefore(answer, holdKey(holdid)).length > 0) {
          failures.push({ rule: 'repeat-answered-as-repeat', message: `${describe(answer)} answered 409 ${answer.body}, though the same release had released the hold` });
        }
        break;
      }
      case 'DELETE /allocations/{orderid}/{sku}': {
        const [orderid, sku] = [pathOf(answer, 'orderid'), pathOf(answer, 'sku')];
        const mayBeBack = after(answer).some((other) =>
          ['POST /allocate', 'POST /orders', 'POST /holds/{holdid}/confirm'].includes(routeOf(other)) && JSON.stringify(other.send.body ?? {}).includes(`"${orderid}"`),
        );
        // A line that shipped units stays once cancelled, as what it shipped: it holds none.
        const stored = lineOf(orderid, sku);
        if (status === 204 && !mayBeBack && stored && !(stored.qty === 0 && stored.shipped !== undefined)) {
          failures.push({ rule: 'answer-holds', message: `${describe(answer)} cancelled the line ${orderid}/${sku}, which is still stored holding ${stored.qty}` });
        }
        break;
      }
      case 'POST /transfers': {
        const transferid = field(answer.send.body, 'transferid');
        const first = sameCommittedBefore(answer, transferKey(transferid))[0];
        const cancels = new Set(http.filter((other) => routeOf(other) === 'DELETE /transfers/{transferid}' && pathOf(other, 'transferid') === transferid).map(({ actor }) => actor));
        const cancelledSince = first && commits.some((commit) => cancels.has(commit.actor) && commit.step > first.step && commit.step < (answer.answeredAt ?? 0));
        if (status >= 400 && status < 500 && first && !cancelledSince) {
          failures.push({ rule: 'repeat-answered-as-repeat', message: `${describe(answer)} answered ${status} ${answer.body}, though ${first.actor} had made the same transfer at step ${first.step}` });
        }
        if (ok && !inventory.transfers.some((transfer) => transfer.transferid === transferid)) {
          failures.push({ rule: 'answer-holds', message: `${describe(answer)} answered ${status} for transfer ${transferid}, which is not stored` });
        }
        break;
      }
      case 'DELETE /transfers/{transferid}': {
        const transferid = pathOf(answer, 'transferid');
        const transfer = inventory.transfers.find((stored) => stored.transferid === transferid);
        if (status === 204 && transfer && transfer.status !== 'cancelled') {
          failures.push({ rule: 'answer-holds', message: `${describe(answer)} cancelled transfer ${transferid}, which is stored ${transfer.status}` });
        }
        const first = sameCommittedBefore(answer, transferKey(transferid));
        if (status === 409 && transfer?.status === 'cancelled' && first.length > 0) {
          failures.push({ rule: 'repeat-answered-as-repeat', message: `${describe(answer)} answered 409 ${answer.body}, though ${first[0]?.actor} had cancelled the transfer at step ${first[0]?.step}` });
        }
        break;
      }
      case 'POST /add_batch': {
        const ref = field(answer.send.body, 'ref');
        if (ok && !inventory.batches.some((batch) => batch.ref === ref)) {
          failures.push({ rule: 'answer-holds', message: `${describe(answer)} added batch ${ref}, which is not stored` });
        }
        break;
      }
    }
  }
  // Copies of one request make one thing: at most one of them is answered 201, unless what the
  // first made was undone in between (a line cancelled or moved, then allocated again).
  const copies = new Map<string, HttpAnswer[]>();
  for (const answer of http.filter(({ status }) => status === 201)) {
    const same = JSON.stringify([answer.send.routeKey, answer.send.path, answer.send.body]);
    copies.set(same, [...(copies.get(same) ?? []), answer]);
  }
  for (const created of copies.values()) {
    const [first, second] = created.sort((one, other) => (one.answeredAt ?? 0) - (other.answeredAt ?? 0));
    if (!first || !second) continue;
    const { orderid, sku } = (first.send.body ?? {}) as { orderid?: string; sku?: string };
    const undone = routeOf(first) === 'POST /allocate' && orderid !== undefined && sku !== undefined && lineChangedBetween(orderid, sku, first.sentAt, second.answeredAt ?? 0);
    // An order answers 201 whenever it allocates a line anew, one of its lines cancelled since among them.
    const undoable = routeOf(first) === 'POST /orders';
    if (!undone && !undoable) failures.push({ rule: 'one-201-for-copies', message: `${describe(first)} and ${second.actor} sent the same request and were both answered 201` });
  }

  // Every stored line was made by a request that was answered 2xx for it, or got no final answer
  // (its write may have committed): never by one that was refused.
  const mayHaveMade = (orderid: string, sku: string) =>
    http.some((answer) => {
      const unanswered = answer.died || (answer.status ?? 0) >= 500;
      if (!unanswered && answer.status !== 200 && answer.status !== 201) return false;
      const body = answer.send.body as { orderid?: string; sku?: string; lines?: { sku: string }[] } | undefined;
      if (routeOf(answer) === 'POST /allocate') return body?.orderid === orderid && body.sku === sku;
      if (routeOf(answer) === 'POST /orders') return body?.orderid === orderid && (body.lines ?? []).some((line) => line.sku === sku);
      if (routeOf(answer) === 'POST /holds/{holdid}/confirm') return body?.orderid === orderid && heldSkus(pathOf(answer, 'holdid')).has(sku);
      return false;
    });
  const heldSkus = (holdid: string) =>
    new Set(http.filter((other) => routeOf(other) === 'POST /holds' && field(other.send.body, 'holdid') === holdid).flatMap((other) => (other.send.body as { lines: { sku: string }[] }).lines.map(({ sku }) => sku)));
  for (const { orderid, sku, batchref } of inventory.lines) {
    if (!mayHaveMade(orderid, sku)) failures.push({ rule: 'line-has-an-author', message: `the line ${orderid}/${sku} is stored on ${batchref}, though every request that could have made it was refused` });
  }

  // A change ends the holds it must in its own write, all of them or none: apart from it only when
  // there are more than that write carries, and the runs that place that many are judged without this.
  const holdsPlaced = new Map(http.filter((answer) => routeOf(answer) === 'POST /holds').map((answer) => [field(answer.send.body, 'holdid'), endingItems(answer.send.body)]));
  if (holdsPlaced.size < HOLDS_ONE_CHANGE_ENDS && CHANGE_ITEMS + [...holdsPlaced.values()].reduce((sum, items) => sum + items, 0) <= MAX_TRANSACTION_ITEMS) {
    for (const answer of [...http, ...fileImports]) {
      const references = changedRefs(answer).map((changed) => keyText(batchReferenceKey(changed)));
      if (references.length === 0) continue;
      // An import's rows each end the holds their own change must: with the reference of one of its batches.
      const apart = commits.find((commit) => commit.actor === answer.actor && commit.items.some((item) => item.startsWith(HOLD_PREFIX)) && !references.some((reference) => commit.items.includes(reference)));
      if (apart) failures.push({ rule: 'holds-end-with-their-change', message: `${describe(answer)} ended holds at step ${apart.step} in a write without its change of the batch` });
    }
  }

  for (const answer of answers) {
    // The sweeper's failures are its handler's; a spread answers as the functions do, a 500 being the code's own failure.
    const status = answer.status ?? 0;
    if (answer.send.kind !== 'http' && ((answer.send.kind === 'spread' && status === 500) || (status >= 500 && !faultExcuses(answer)))) {
      failures.push({ rule: 'no-5xx-without-a-fault', message: `${describe(answer)} answered ${status}${status === 500 ? '' : ' though no fault met it'}: ${answer.body}` });
    }
  }
  return failures;
};
