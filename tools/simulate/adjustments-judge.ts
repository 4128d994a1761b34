import { type Adjustment, type AdjustmentRequest, type AdjustmentReason, countTimeOf, countTimeRefused, isSameAdjustment } from '../../domain/adjustments';
import { adjustmentKey } from '../../functions/store/adjustments';
import type { RecordedStockChange } from '../../functions/store/stock-changes';
import type { Inventory } from '../invariants';
import type { Failure } from './judge';
import type { Moment } from './model-judge';
import { type Answer, type Reached, bodyOf, keyText } from './observed';
import { itemsMeet } from './store-seam';

/*
 * Adjustments and counts (docs/api.md, "Adjustments") held against the table between the run's
 * commits (./simulation.ts reads it after each) and the adjustments stored at its end, each written
 * once and kept. The qty a count leaves rests on the batch's records of its changes, so the records
 * are judged first: every change of a batch's qty is recorded in its own commit, at a moment while
 * its request ran (a count's, at the moment it counted), and none committed after a count is
 * recorded at or before that count's moment. Then a count is applied as of its time: the qty it
 * writes is what it counted with every change recorded after its moment, and committed before it,
 * on top (never below zero); a count older than one applied changes nothing, and a stale_count says
 * that one was. An answer is judged by the commit that made the adjustment, whichever attempt made
 * it: a retry whose first attempt committed, its answer lost, answers the stored adjustment.
 */

type HttpAnswer = Answer & { readonly send: Extract<Answer['send'], { kind: 'http' }> };

interface Asked {
  readonly adjustmentid: string;
  readonly ref: string;
  readonly reason: AdjustmentReason;
  readonly qty?: number;
  readonly delta?: number;
  readonly counted_at?: string;
  readonly expected_qty?: number;
  readonly note?: string;
}

/** The request as the service reads it: its moment as one text, however it was written. */
const requestOf = ({ adjustmentid, ref, reason, qty, delta, counted_at, expected_qty, note }: Asked): AdjustmentRequest => ({
  adjustmentid,
  ref,
  reason,
  ...(qty === undefined ? {} : { qty }),
  ...(delta === undefined ? {} : { delta }),
  ...(counted_at === undefined ? {} : { countedAt: new Date(counted_at).toISOString() }),
  ...(expected_qty === undefined ? {} : { expectedQty: expected_qty }),
  ...(note === undefined ? {} : { note }),
});

const iso = (time: number) => new Date(time).toISOString();
const qtyOf = (inventory: Inventory, ref: string) => inventory.batches.find((batch) => batch.ref === ref)?.qty;
const shown = ({ adjustmentid, ref, reason, before, after }: Adjustment) => JSON.stringify({ adjustmentid, ref, reason, before, after });

/** The changes recorded in `now` and not in `was`: a commit's own (records are never changed, and no run lasts long enough for one to expire). */
const recordedBetween = (was: readonly RecordedStockChange[], now: readonly RecordedStockChange[]): RecordedStockChange[] => {
  const left = new Map<string, number>();
  for (const change of was) left.set(JSON.stringify(change), (left.get(JSON.stringify(change)) ?? 0) + 1);
  return now.filter((change) => {
    const key = JSON.stringify(change);
    const earlier = left.get(key) ?? 0;
    if (earlier > 0) left.set(key, earlier - 1);
    return earlier === 0;
  });
};

export const judgeAdjustments = (answers: readonly Answer[], reached: readonly Reached[], timeline: readonly Moment[], adjustments: readonly Adjustment[]): Failure[] => {
  const failures: Failure[] = [];
  const http = answers.filter((answer): answer is HttpAnswer => answer.send.kind === 'http');
  const answerOf = new Map(answers.map((answer) => [answer.actor, answer]));
  const stored = new Map(adjustments.map((adjustment) => [adjustment.adjustmentid, adjustment]));
  const commits = reached.filter(({ committed }) => committed);
  /** The commit that wrote each adjustment: one, as its record is put on condition that it is new. */
  const commitOf = new Map<string, Reached>();
  for (const adjustment of adjustments) {
    const made = commits.filter(({ items }) => items.includes(keyText(adjustmentKey(adjustment.adjustmentid))));
    if (made.length !== 1) failures.push({ rule: 'adjustment-as-written', message: `adjustment ${adjustment.adjustmentid} is stored, written by ${made.length} commits` });
    if (made[0]) commitOf.set(adjustment.adjustmentid, made[0]);
  }
  const madeAt = new Map<number, Adjustment[]>();
  for (const adjustment of adjustments) {
    const step = commitOf.get(adjustment.adjustmentid)?.step;
    if (step !== undefined) madeAt.set(step, [...(madeAt.get(step) ?? []), adjustment]);
  }

  // The counts applied, each with its moment, at the step it committed.
  const counts: { readonly ref: string; readonly countedAt: string; readonly step: number; readonly adjustmentid: string }[] = [];
  const lastCount = new Map<string, string>();
  timeline.forEach((moment, index) => {
    const was = timeline[index - 1];
    if (!was) return;
    const actor = commits.find(({ step }) => step === moment.step)?.actor;
    const committing = actor === undefined ? undefined : answerOf.get(actor);
    const made = madeAt.get(moment.step) ?? [];
    const countOf = new Map(made.flatMap((adjustment) => { const at = countTimeOf(adjustment); return at === undefined ? [] : [[adjustment.adjustmentid, at] as const]; }));
    const recorded = recordedBetween(was.inventory.stockChanges, moment.inventory.stockChanges);
    for (const batch of moment.inventory.batches) {
      const moved = batch.qty - (qtyOf(was.inventory, batch.ref) ?? 0);
      const records = recorded.filter(({ ref }) => ref === batch.ref);
      const total = records.reduce((sum, { delta }) => sum + delta, 0);
      if (total !== moved) {
        failures.push({ rule: 'changes-recorded', message: `batch ${batch.ref}'s qty went from ${qtyOf(was.inventory, batch.ref) ?? 'nothing'} to ${batch.qty} at step ${moment.step}, where its changes recorded ${JSON.stringify(records)}` });
      }
    }
    for (const change of recorded) {
      const counted = change.reference === undefined ? undefined : countOf.get(change.reference);
      const last = lastCount.get(change.ref);
      if (counted !== undefined) {
        if (change.at !== counted) failures.push({ rule: 'changes-recorded', message: `count ${change.reference} of ${change.ref}, taken at ${counted}, recorded its change at ${change.at} (step ${moment.step})` });
        continue;
      }
      const from = committing ? iso(committing.sentTime) : '';
      if (change.at > iso(moment.at) || change.at < from) {
        failures.push({ rule: 'changes-recorded', message: `a change of ${change.ref} committed at step ${moment.step} (${iso(moment.at)}), by ${actor} sent at ${from}, is recorded at ${change.at}` });
      }
      if (last !== undefined && change.at <= last) {
        failures.push({ rule: 'change-after-count', message: `a change of ${change.ref} by ${change.delta} (${change.reason}) committed at step ${moment.step} is recorded at ${change.at}, not after the count of ${last} applied before it` });
      }
    }
    for (const adjustment of made) {
      const { adjustmentid, ref, before, after } = adjustment;
      const [qtyBefore, qtyAfter] = [qtyOf(was.inventory, ref), qtyOf(moment.inventory, ref)];
      if (qtyBefore !== before || qtyAfter !== after) {
        failures.push({ rule: 'adjustment-as-written', message: `adjustment ${adjustmentid} is stored with before ${before} and after ${after}, where its commit at step ${moment.step} took batch ${ref} from ${qtyBefore} to ${qtyAfter}` });
      }
      const countedAt = countTimeOf(adjustment);
      let due: number | undefined;
      if (adjustment.delta !== undefined) due = before + adjustment.delta;
      else if (countedAt === undefined) due = adjustment.qty;
      else {
        const since = was.inventory.stockChanges.filter((change) => change.ref === ref && change.at > countedAt);
        due = Math.max(0, (adjustment.qty ?? 0) + since.reduce((sum, { delta }) => sum + delta, 0));
        if (after !== due) {
          failures.push({
            rule: 'count-as-of-its-time',
            message: `count ${adjustmentid} of ${adjustment.qty} in ${ref} as of ${countedAt} left it ${after}, where the changes recorded since (${since.map(({ delta, reason, at }) => `${delta} ${reason} at ${at}`).join(', ') || 'none'}) make it ${due}`,
          });
        }
        const later = lastCount.get(ref);
        if (later !== undefined && later > countedAt) failures.push({ rule: 'stale-count-changes-nothing', message: `count ${adjustmentid} of ${ref} as of ${countedAt} was applied at step ${moment.step}, after the count of ${later}` });
        counts.push({ ref, countedAt, step: moment.step, adjustmentid });
        if (later === undefined || countedAt > later) lastCount.set(ref, countedAt);
        continue;
      }
      if (after !== due) failures.push({ rule: 'adjustment-as-written', message: `adjustment ${adjustmentid} of ${ref} ${adjustment.delta === undefined ? `to ${adjustment.qty}` : `by ${adjustment.delta}`} left it ${after}, from ${before}` });
      if (adjustment.expectedQty !== undefined && adjustment.expectedQty !== before) {
        failures.push({ rule: 'adjustment-as-written', message: `adjustment ${adjustmentid} expecting ${adjustment.expectedQty} was applied to ${ref} at qty ${before}` });
      }
    }
  });

  // Every adjustment stored was made by a request that was answered for it, or got no final answer.
  for (const adjustment of adjustments) {
    const commit = commitOf.get(adjustment.adjustmentid);
    const author = commit && answerOf.get(commit.actor);
    // An import's row makes its adjustment under `<importid>#<row>`, inline or run by the engine of imports: ./imports-judge.ts judges those.
    if (!author || author.send.kind === 'import-file' || (author.send.kind === 'http' && author.send.routeKey === 'POST /imports')) continue;
    const unanswered = author.died || author.answeredAt === undefined || (author.status ?? 0) >= 500;
    const asked = author.send.kind === 'http' ? (author.send.body as Asked) : undefined;
    if (!asked || !isSameAdjustment(adjustment, requestOf(asked))) failures.push({ rule: 'adjustment-as-written', message: `adjustment ${adjustment.adjustmentid} is stored as ${JSON.stringify(adjustment)}, written by ${author.actor}, which asked ${JSON.stringify(asked)}` });
    if (!unanswered && author.status !== 201 && !(author.status === 200 && author.faultsAt.includes(commit.step))) {
      failures.push({ rule: 'adjustment-has-an-author', message: `adjustment ${adjustment.adjustmentid} was written by ${author.actor}, which answered ${author.status} ${author.body}` });
    }
  }

  const momentsOf = (answer: Answer) =>
    timeline.filter(({ step }, index) => step <= (answer.answeredAt ?? Number.MAX_SAFE_INTEGER) && (timeline[index + 1]?.step ?? Number.MAX_SAFE_INTEGER) > answer.sentAt).map(({ inventory }) => inventory);
  for (const answer of http) {
    if (answer.send.routeKey !== 'POST /adjustments' || answer.answeredAt === undefined) continue;
    const { status = 0 } = answer;
    if (status >= 500) continue;
    const asked = answer.send.body as Asked;
    const request = requestOf(asked);
    const body = bodyOf(answer);
    const made = stored.get(asked.adjustmentid);
    const commit = commitOf.get(asked.adjustmentid);
    const fail = (rule: string, message: string) => failures.push({ rule, message: `${answer.actor} (POST /adjustments ${asked.adjustmentid}) answered ${status} ${message}` });
    const someMoment = (holds: (inventory: Inventory) => boolean) => momentsOf(answer).some(holds);
    const same = made !== undefined && isSameAdjustment(made, request);
    const answered = JSON.stringify({ adjustmentid: body.adjustmentid, ref: body.ref, reason: body.reason, before: body.before, after: body.after });
    if (status === 201 || status === 200) {
      if (!made || !commit || !same) fail('adjustment-answered-as-stored', `though ${made ? `the adjustment stored under its id is ${JSON.stringify(made)}` : 'no adjustment is stored under its id'}`);
      else if (answered !== shown(made)) fail('adjustment-answered-as-stored', `${answer.body}, where the adjustment is stored ${shown(made)}`);
      else if (status === 201 && (commit.actor !== answer.actor || commit.step < answer.sentAt || commit.step > answer.answeredAt)) fail('adjustment-answered-as-stored', `though ${commit.actor} wrote it, at step ${commit.step}`);
      else if (status === 200 && (commit.step > answer.answeredAt || (commit.actor === answer.actor && !answer.faultsAt.includes(commit.step)))) {
        fail('adjustment-answered-as-stored', `as a repeat, though ${commit.actor} wrote it at step ${commit.step}`);
      }
      continue;
    }
    // A refusal of the same adjustment made before, which this request met: it answers as a repeat.
    const met = reached.filter((call) => call.actor === answer.actor && !call.committed);
    if (same && commit && commit.actor !== answer.actor && met.some((call) => call.step > commit.step && itemsMeet(call.items, commit.items))) {
      fail('repeat-answered-as-repeat', `${answer.body}, though ${commit.actor} had made the same adjustment at step ${commit.step}`);
    }
    const code = body.code;
    const issues = ((body.issues ?? []) as { path: string }[]).map(({ path }) => path);
    if (status === 409 && code === 'adjustment_exists' && !(made && !same && commit && commit.step <= answer.answeredAt)) {
      fail('refusal-was-true', `adjustment_exists, though ${made ? 'the one stored under its id is the same' : 'none is stored under its id'}`);
    }
    if (status === 409 && code === 'qty_changed' && !someMoment((inventory) => qtyOf(inventory, request.ref) === body.qty && body.qty !== request.expectedQty)) {
      fail('refusal-was-true', `qty_changed with qty ${String(body.qty)}, which batch ${request.ref} had at no moment while it ran, or expecting ${request.expectedQty}`);
    }
    if (status === 409 && code === 'stale_count') {
      // A count taken now is taken once the request is handled: no sooner than it was sent.
      const countedAt = request.countedAt ?? iso(answer.sentTime);
      if (!counts.some(({ ref, countedAt: later, step }) => ref === request.ref && later > countedAt && step <= (answer.answeredAt ?? 0))) {
        fail('refusal-was-true', `stale_count for a count as of ${countedAt}, though no later count of ${request.ref} was applied before it answered`);
      }
    }
    if (status === 400 && issues.includes('delta') && !someMoment((inventory) => (qtyOf(inventory, request.ref) ?? 0) + (request.delta ?? 0) < 0)) {
      fail('refusal-was-true', `naming delta ${request.delta}, though batch ${request.ref} had that many at every moment while it ran`);
    }
    if (status === 400 && issues.includes('counted_at')) {
      const { countedAt = '' } = request;
      if (countTimeRefused(countedAt, answer.sentTime) === undefined && countTimeRefused(countedAt, answer.answeredTime ?? answer.sentTime) === undefined) {
        fail('refusal-was-true', `naming counted_at ${countedAt}, neither in the future nor too long ago while it ran`);
      }
    }
    if (status === 404 && code === 'unknown_batch' && !someMoment((inventory) => qtyOf(inventory, request.ref) === undefined)) {
      fail('refusal-was-true', `unknown_batch, though batch ${request.ref} was stored throughout`);
    }
  }
  return failures;
};
