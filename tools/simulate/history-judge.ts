import { DEFAULT_HISTORY_LIMIT, positionOf } from '../../domain/stock-history';
import type { RecordedStockChange } from '../../functions/store/stock-changes';
import type { Failure } from './judge';
import type { Moment } from './model-judge';
import type { Answer } from './observed';

/*
 * A SKU's history as `GET /skus/{sku}/history` answered it (docs/api.md, "History"): every entry a
 * change the table records, as it records it, of that SKU (and location, when the read named one),
 * newest first, at most `limit`; and none missing: every change recorded before the read was sent,
 * between where the page starts (after the cursor sent) and where it ends (its last entry, when it
 * answered a cursor), is on it. Changes at one moment are many in a run, whose clock moves only
 * when it says, and a page may end among them: the pages a client read one after another, each
 * from the cursor the one before answered, to the last, list every change recorded before the
 * first was sent. The simulator's store lists an index as it writes the table, so a change
 * committed before a read is listed by it.
 */

interface EntryView {
  readonly at: string;
  readonly kind: string;
  readonly reason: string;
  readonly batchref: string;
  readonly location: string;
  readonly delta: number;
  readonly qty_after: number;
  readonly reference?: string;
  readonly actor: string;
}

const entryOf = (change: RecordedStockChange): EntryView => ({
  at: change.at,
  kind: change.kind ?? '',
  reason: change.reason,
  batchref: change.ref,
  location: change.location ?? 'default',
  delta: change.delta,
  qty_after: change.qtyAfter ?? Number.NaN,
  ...(change.reference === undefined ? {} : { reference: change.reference }),
  actor: change.actor ?? '',
});

const same = (one: unknown, other: unknown) => JSON.stringify(one) === JSON.stringify(other);

type Page = { readonly answer: Answer; readonly entries: readonly EntryView[]; readonly cursor?: string };

export const judgeHistory = (answers: readonly Answer[], timeline: readonly Moment[]): Failure[] => {
  const failures: Failure[] = [];
  const final = timeline.at(-1)?.inventory;
  if (!final) return failures;
  const pages: Page[] = [];
  const recordedWhenSent = (answer: Answer) => [...timeline].reverse().find(({ step }) => step <= answer.sentAt)?.inventory.stockChanges ?? [];
  for (const answer of answers) {
    const { send } = answer;
    if (send.kind !== 'http' || send.routeKey !== 'GET /skus/{sku}/history' || answer.status !== 200) continue;
    const fail = (rule: string, message: string) => failures.push({ rule, message: `${answer.actor} (${send.routeKey}) answered 200 ${message}` });
    const sku = send.path?.sku ?? '';
    const { location, limit, cursor } = send.query ?? {};
    let body: { entries?: EntryView[]; cursor?: string };
    try {
      body = JSON.parse(answer.body ?? '') as typeof body;
    } catch {
      fail('history-as-recorded', `a body that is not JSON: ${answer.body}`);
      continue;
    }
    const entries = body.entries ?? [];
    pages.push({ answer, entries, ...(body.cursor === undefined ? {} : { cursor: body.cursor }) });
    const ofTheRead = (change: RecordedStockChange) => change.sku === sku && (location === undefined || (change.location ?? 'default') === location);
    const recorded = final.stockChanges.filter(ofTheRead).map(entryOf);
    if (entries.length > Number(limit ?? DEFAULT_HISTORY_LIMIT)) fail('history-as-recorded', `${entries.length} entries, past its limit of ${limit ?? DEFAULT_HISTORY_LIMIT}`);
    entries.forEach((entry, index) => {
      if (!recorded.some((change) => same(change, entry))) fail('history-as-recorded', `the entry ${JSON.stringify(entry)}, which the table records of no change of ${sku}${location ? ` at ${location}` : ''}`);
      const before = entries[index - 1];
      if (before && before.at < entry.at) fail('history-as-recorded', `the entry at ${entry.at} below one at ${before.at}: not newest first`);
      if (entries.findIndex((other) => same(other, entry)) !== index) fail('history-as-recorded', `the entry ${JSON.stringify(entry)} twice`);
    });
    // The changes the page had to list: recorded when the read was sent, after the cursor it sent, and before where it ended.
    const after = cursor === undefined ? undefined : positionOf(cursor)?.at;
    const last = entries.at(-1);
    const endsAt = body.cursor === undefined ? undefined : last?.at;
    if (body.cursor !== undefined && last === undefined) continue;
    for (const change of recordedWhenSent(answer).filter(ofTheRead).map(entryOf)) {
      if ((after !== undefined && change.at >= after) || (endsAt !== undefined && change.at <= endsAt)) continue;
      if (!entries.some((entry) => same(entry, change))) fail('history-complete', `a page of ${sku}'s history without ${JSON.stringify(change)}, recorded before the read was sent`);
    }
  }
  // Each run of pages a client read to the last, from a first page: together, every change recorded before the first.
  const nextOf = (page: Page) =>
    pages.find(({ answer: { send } }) => send.kind === 'http' && send.cursorOf === page.answer.send.id && page.cursor !== undefined && send.query?.cursor === page.cursor);
  for (const first of pages.filter(({ answer: { send } }) => send.kind === 'http' && send.query?.cursor === undefined)) {
    const run = [first];
    for (let page = nextOf(first); page && !run.includes(page); page = nextOf(page)) run.push(page);
    if ((run.at(-1) as Page).cursor !== undefined) continue;
    const { send } = first.answer;
    if (send.kind !== 'http') continue;
    const sku = send.path?.sku ?? '';
    const location = send.query?.location;
    const listed = run.flatMap(({ entries }) => entries);
    for (const change of recordedWhenSent(first.answer).filter((one) => one.sku === sku && (location === undefined || (one.location ?? 'default') === location)).map(entryOf)) {
      if (listed.some((entry) => same(entry, change))) continue;
      failures.push({
        rule: 'history-complete',
        message: `the pages ${run.map(({ answer }) => answer.actor).join(', ')} of ${sku}'s history, read to the last, without ${JSON.stringify(change)}, recorded before the first was sent`,
      });
    }
    for (const [index, entry] of listed.entries()) {
      if (listed.findIndex((other) => same(other, entry)) !== index) failures.push({ rule: 'history-as-recorded', message: `the pages ${run.map(({ answer }) => answer.actor).join(', ')} of ${sku}'s history list ${JSON.stringify(entry)} twice` });
    }
  }
  return failures;
};
