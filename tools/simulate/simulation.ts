import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand, type ScanCommandOutput } from '@aws-sdk/lib-dynamodb';
import type { Adjustment } from '../../domain/adjustments';
import { StoreUnavailable, TransientFailure } from '../../domain/errors';
import { ImportStepUndone } from '../../functions/import-worker';
import { DynamoDbBatchRepository } from '../../functions/store/batch-repository';
import { ADDED_BY } from '../../functions/store/batches';
import type { StoredImportItem } from '../../functions/store/imports';
import { parseStoredItem } from '../../functions/store/items';
import { defaultConflictRetryPolicy } from '../../functions/store/store-calls';
import { ensureTable } from '../../local/table';
import { findViolations, readInventory } from '../invariants';
import { Chance } from './chance';
import { Functions, type Instance, contextOf, functionOf, httpEvent } from './functions';
import { feedFile, runFileImport } from './import-engine';
import { judgeAdjustments } from './adjustments-judge';
import { judgeEvents } from './events-judge';
import { judgeFields } from './fields-judge';
import { judgeHistory } from './history-judge';
import { type StoredImports, judgeImports } from './imports-judge';
import { judgePromises } from './promises-judge';
import { type Failure, judge } from './judge';
import { type Moment, judgeAgainstModel } from './model-judge';
import { type Answer, type FaultMet, type Reached, bodyOf } from './observed';
import { planted } from './planted-defects';
import { type CallShape, FollowSchedule, type PendingCall, PriorityChangePoints, RandomWalk, type Strategy, Waiting, actorNow, currentActor } from './scheduler';
import { SimulatedClock, simulatedWorld } from './simulated-world';
import type { StoreOfRecord } from './store-of-record';
import { streamEvents } from './stream';
import { answerLost, cancellation, itemsMeet, scheduledSender, throttled } from './store-seam';
import { type Send, describeSend } from './workload';
import { type FaultKind, type Fault, type Plan, type SlowCall, type RunRecord } from './plans';

export { type Fault, type FaultKind, type Plan, type RunRecord, type Settings, type SlowCall, drawSettings, planOf } from './plans';
export type { Answer, FaultMet, Reached } from './observed';

/*
 * One run of the simulated world: the workload's requests sent through the real handlers, domain
 * services and DynamoDB adapter, every store call released one at a time by the run's strategy and
 * sent to DynamoDB Local, or failed by a fault; then the judge (./judge.ts). Everything it does is
 * written into its story, and a run is a function of its plan.
 */


/** The ids of the reads the clients make once they finish: past any workload's. */
const SETTLING_IDS_FROM = 1_000;
/** A run that takes more steps than this is going round in circles. */
const MAX_STEPS = 4_000;
/** A client sends a failed request (a 5xx, or no answer) up to this many times in all while faults happen. */
const MAX_ATTEMPTS = 3;


const strategyOf = ({ seed, settings, workload, follow }: Plan): Strategy => {
  if (follow) return new FollowSchedule(follow.order);
  const chance = Chance.stream(seed, 'schedule');
  return settings.strategy.kind === 'pct' ? new PriorityChangePoints(chance, settings.strategy.depth, workload.length * 6) : new RandomWalk(chance);
};

const isTransaction = (call: PendingCall) => call.shape.operation === 'TransactWrite' || call.shape.operation === 'TransactGet';

/**
 * How long after its turn a transaction still holds its items, as one in flight beside it finds
 * them: the run's calls take 1 to 5 ms of its clock, so a take sent again after its backoff (25 ms
 * and more) meets the takes that went meanwhile, as it would on a batch under a sale.
 */
const HELD_FOR_MS = 30;

/**
 * How late a slow call reaches the store: from a few of the run's calls to past the whole backoff of
 * the default conflict policy (store-calls.ts, 175 ms at most), long enough for other requests to
 * read and write between two calls of one.
 */
const MIN_SLOW_MS = 5;
const MAX_SLOW_MS = 250;

/**
 * Draws the faults of an exploring run, or reads those of the run it replays. A transaction meets a
 * conflict only where DynamoDB would give one: on an item another request's transaction holds,
 * one waiting beside it or one that committed in the last steps.
 */
const faultSource = ({ seed, settings, follow }: Plan) => {
  if (follow) {
    return (call: PendingCall): Fault | undefined => {
      const fault = follow.faults.get(call.id);
      const fits = fault?.operation === call.shape.operation && (fault.item ?? 0) < call.shape.items.length;
      return fits ? fault : undefined;
    };
  }
  const chance = Chance.stream(seed, 'faults');
  return (call: PendingCall, others: readonly PendingCall[], recent: readonly PendingCall[]): Fault | undefined => {
    if (isTransaction(call)) {
      const holding = [...others, ...recent].find(
        (other) => other.actor !== call.actor && isTransaction(other) && (other.shape.writes || call.shape.writes) && itemsMeet(call.shape.items, other.shape.items),
      );
      if (holding && chance.chance(settings.conflictRate)) {
        return { kind: 'conflict', operation: call.shape.operation, item: call.shape.items.findIndex((item) => itemsMeet([item], holding.shape.items)) };
      }
    }
    if (!chance.chance(settings.faultRate)) return undefined;
    const kind = chance.weighted<FaultKind>([['throttled', 3], ['lost-reply', 3], ['crash-before', 1], ['crash-after', 2]]);
    // A throttled transaction is cancelled with ThrottlingError at one of its items.
    return { kind, operation: call.shape.operation, ...(kind === 'throttled' && isTransaction(call) ? { item: chance.int(0, call.shape.items.length - 1) } : {}) };
  };
};

/** An error DynamoDB answered (a failed condition, a cancelled transaction, a bad request), not one of reaching it. */
const isAnswer = (error: unknown): boolean => {
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return status !== undefined && status >= 400 && status < 500;
};

const outcomeOf = (operation: string, output: unknown): string => {
  const { Items, Item, Responses } = (output ?? {}) as { Items?: unknown[]; Item?: unknown; Responses?: unknown };
  if (Items) return `${Items.length} items`;
  if (Responses) return `${Object.values(Responses).flat().filter(Boolean).length} found`;
  if (operation === 'Get') return Item === undefined ? 'none' : 'found';
  return 'ok';
};

const errorOutcome = (error: unknown): string => {
  const { name, CancellationReasons } = error as { name?: string; CancellationReasons?: { Code?: string }[] };
  if (CancellationReasons) return `cancelled [${CancellationReasons.map(({ Code }) => Code).join(', ')}]`;
  return String(name);
};

const padded = (step: number | string, actor: string) => `${String(step).padStart(5)}  ${actor.padEnd(7)}`;

let tablesMade = 0;

/** Runs a plan against DynamoDB Local, in a table of its own, and judges it. */
export const runPlan = async (plan: Plan, storeOfRecord: StoreOfRecord): Promise<RunRecord> => {
  const tableName = `simulated-${plan.seed}-${++tablesMade}`;
  await ensureTable(storeOfRecord.tables, tableName);
  try {
    return await runIn(plan, storeOfRecord, tableName);
  } finally {
    await storeOfRecord.tables.send(new DeleteTableCommand({ TableName: tableName }));
  }
};

const runIn = async (plan: Plan, storeOfRecord: StoreOfRecord, tableName: string): Promise<RunRecord> => {
  const store = DynamoDBDocumentClient.from(storeOfRecord.tables);
  const { settings, workload } = plan;
  const clock = new SimulatedClock();
  const story: string[] = [];
  let step = 0;
  let settling = false;
  const delays = new Map<string, SlowCall>();
  const slowChance = Chance.stream(plan.seed, 'slow');
  const slowness = (id: string, shape: CallShape): number | undefined => {
    const followed = plan.follow?.delays.get(id);
    const delayMs = plan.follow
      ? followed?.operation === shape.operation
        ? followed.delayMs
        : undefined
      : !settling && slowChance.chance(settings.slowRate ?? 0)
        ? slowChance.int(MIN_SLOW_MS, MAX_SLOW_MS)
        : undefined;
    if (delayMs === undefined) return undefined;
    delays.set(id, { operation: shape.operation, delayMs });
    story.push(`${padded(step, actorNow())}${shape.text} -> slow: takes its turn ${delayMs} ms from now`);
    return delayMs;
  };
  const waiting = new Waiting(() => clock.now(), slowness);
  const world = simulatedWorld(clock, Chance.stream(plan.seed, 'world'), waiting);
  const steps = Chance.stream(plan.seed, 'steps');
  const strategy = strategyOf(plan);
  const faultFor = faultSource(plan);
  const sender = scheduledSender(waiting);
  const functions = new Functions(settings.mode, () => planted(plan.plant, new DynamoDbBatchRepository(sender, tableName, defaultConflictRetryPolicy, undefined, undefined, world)));

  const order: string[] = [];
  const released: PendingCall[] = [];
  const recent: { readonly call: PendingCall; readonly at: number }[] = [];
  const timeline: Moment[] = [{ step: -1, at: clock.now(), inventory: await readInventory(store, tableName) }];
  const faults = new Map<string, Fault>();
  const answers: Answer[] = [];
  const reached: Reached[] = [];
  const faultsMet: FaultMet[] = [];
  const failures: Failure[] = [];
  const running = new Map<string, Answer>();
  const arrivals: { readonly send: Send; readonly attempt: number; readonly at: number }[] = workload.map((send) => ({ send, attempt: 1, at: send.at }));
  // A send that waits for another's answer (Send.after) arrives once that one has answered or died;
  // one a shrink cut out is waited for no longer.
  const sent = new Set(workload.map(({ id }) => id));
  const over = new Set<number>();
  const mayArrive = ({ send, attempt }: (typeof arrivals)[number]) => attempt > 1 || send.after === undefined || !sent.has(send.after) || over.has(send.after);

  const retryLater = (answer: Answer) => {
    if (answer.attempt >= MAX_ATTEMPTS && !settling) return;
    const at = step + 2 + ((answer.send.id * 7 + answer.attempt * 3) % 9);
    const index = arrivals.findIndex((arrival) => arrival.at > at);
    arrivals.splice(index < 0 ? arrivals.length : index, 0, { send: answer.send, attempt: answer.attempt + 1, at });
  };

  const finish = (instance: Instance, answer: Answer, status: number, body: string) => {
    functions.leave(instance, answer.actor);
    running.delete(answer.actor);
    waiting.ended();
    if (answer.died) return;
    over.add(answer.send.id);
    Object.assign(answer, { answeredAt: step, answeredTime: clock.now(), status, body });
    story.push(`${padded(step, answer.actor)}answers ${status}${body ? ` ${body}` : ''}`);
    if (status >= 500) retryLater(answer);
  };

  // The moments of the run's stocktakes, and each count as first sent, with the moment it names:
  // its retries and its copies name the same one.
  const stocktakes = new Map<number, number>();
  const countsSent = new Map<number, Send>();
  // Each page of a history as first sent, with the cursor the page before it was answered: its retries read the same page.
  const pagesSent = new Map<number, Send>();
  const cursorAnswered = (id: number): string | undefined => {
    const answered = answers.filter((answer) => answer.send.id === id && answer.status === 200).at(-1);
    try {
      const { cursor } = JSON.parse(answered?.body ?? '{}') as { cursor?: unknown };
      return typeof cursor === 'string' ? cursor : undefined;
    } catch {
      return undefined;
    }
  };
  const asSent = <Sent extends Send>(send: Sent): Sent => {
    if (send.kind === 'http' && send.cursorOf !== undefined) {
      const made = pagesSent.get(send.id) as Sent | undefined;
      if (made) return made;
      const cursor = cursorAnswered(send.cursorOf);
      const resolved = (cursor === undefined ? send : { ...send, query: { ...send.query, cursor } }) as Sent;
      pagesSent.set(send.id, resolved);
      return resolved;
    }
    if (send.kind !== 'http' || send.countedAtOf === undefined) return send;
    const made = countsSent.get(send.id) as Sent | undefined;
    if (made) return made;
    const moment = stocktakes.get(send.countedAtOf) ?? clock.now();
    stocktakes.set(send.countedAtOf, moment);
    const { countedAtOf: _of, countedAtOffset, ...rest } = send;
    const resolved = { ...rest, body: { ...(send.body as object), counted_at: writtenAt(moment, countedAtOffset) } } as unknown as Sent;
    countsSent.set(send.id, resolved);
    return resolved;
  };

  // The file each import was sent, once its client put it: the bucket takes one file an import (If-None-Match: *), and only for an upload its import answered.
  const filesPut = new Map<string, string>();
  const uploadRefused = (send: Extract<Send, { kind: 'import-file' }>): string | undefined => {
    const opened = answers.filter((answer) => answer.send.id === send.after).at(-1);
    if (filesPut.has(send.importid)) return 'the PUT is 412: the import has its file';
    if (!opened || !('upload' in bodyOf(opened))) return 'its import answered no upload';
    filesPut.set(send.importid, feedFile(send.rows).etag);
    return undefined;
  };

  const start = ({ send: drawn, attempt }: { readonly send: Send; readonly attempt: number }) => {
    if (drawn.kind === 'clock' || drawn.kind === 'stocktake') {
      over.add(drawn.id);
      if (drawn.kind === 'clock') clock.advance(drawn.advanceMs);
      else if (!stocktakes.has(drawn.id)) stocktakes.set(drawn.id, clock.now());
      story.push(`${padded(step, `r${drawn.id}`)}${describeSend(drawn)}${drawn.kind === 'stocktake' ? ` at ${new Date(stocktakes.get(drawn.id) ?? 0).toISOString()}` : ''}`);
      return;
    }
    const send = asSent(drawn);
    const actor = attempt === 1 ? `r${send.id}` : `r${send.id}.${attempt}`;
    if (send.kind === 'import-file' && attempt === 1) {
      const refused = uploadRefused(send);
      if (refused) {
        over.add(send.id);
        story.push(`${padded(step, actor)}uploads no file for import ${send.importid}: ${refused}`);
        return;
      }
    }
    const answer: Answer = { actor, send, attempt, sentAt: step, sentTime: clock.now(), faultsAt: [] };
    answers.push(answer);
    running.set(actor, answer);
    // A spread stands for takes, which are the allocations function's.
    const instance = functions.enter(actor, send.kind === 'http' ? functionOf(send.routeKey) : send.kind === 'spread' ? 'allocations' : send.kind === 'import-file' ? 'importWorker' : 'sweeper');
    story.push(`${padded(step, actor)}${attempt === 1 ? 'sends' : 'sends again'} ${describeSend(send)}${functions.mode === 'lambda' ? ` (${instance.function} ${instance.number})` : ''}`);
    currentActor.run(actor, () => {
      const invoked =
        send.kind === 'sweep'
          ? instance.sweep(contextOf(actor)).then((swept) => ({ statusCode: 200, body: JSON.stringify(swept) }))
          : send.kind === 'import-file'
            ? runFileImport(send.importid, send.rows, (event) => instance.importStep(event, contextOf(actor))).then(
                (result) => ({ statusCode: 200, body: JSON.stringify(result) }),
                // A step the engine would run again, after its retries: the execution fails, and is sent again; anything else is the code's own failure (500).
                (error: unknown) => {
                  if (error instanceof TransientFailure || error instanceof ImportStepUndone) return { statusCode: 503, body: `${(error as Error).name}: ${(error as Error).message}` };
                  throw error;
                },
              )
          : send.kind === 'spread'
            ? instance.spread(send.ref, send.sku).then(
                () => ({ statusCode: 200, body: '' }),
                // As the functions answer: unavailable is a 503, anything else a failure of the code (500).
                (error: unknown) => {
                  if (error instanceof StoreUnavailable) return { statusCode: 503, body: error.message };
                  throw error;
                },
              )
            : instance.http(httpEvent(send.routeKey, send.path, send.body, actor, send.query), contextOf(actor));
      invoked.then(
        ({ statusCode = 200, body = '' }) => finish(instance, answer, statusCode, body),
        (error: unknown) => finish(instance, answer, 500, `the function failed: ${(error as Error).name}: ${(error as Error).message}`),
      );
    });
  };

  const die = (actor: string) => {
    const instance = functions.of(actor) ?? functions.ran(actor);
    const { unanswered, stopped } = instance ? functions.die(instance) : { unanswered: [actor], stopped: [actor] };
    waiting.kill(stopped);
    for (const gone of unanswered) {
      const answer = running.get(gone);
      if (!answer) continue;
      running.delete(gone);
      answer.died = true;
      over.add(answer.send.id);
      story.push(`${padded(step, gone)}gets no answer: its instance died`);
      retryLater(answer);
    }
  };

  /** Lets every request run until each waits on a call or a sleep, or has ended. */
  const settle = async () => {
    let seen: number;
    do {
      seen = waiting.activity;
      await new Promise((resolve) => setImmediate(resolve));
    } while (waiting.activity !== seen);
  };

  const runUntilQuiet = async () => {
    for (;;) {
      for (let index = 0; index < arrivals.length && (arrivals[index]?.at ?? 0) <= step; ) {
        const arrival = arrivals[index] as (typeof arrivals)[number];
        if (mayArrive(arrival)) start(arrivals.splice(index, 1)[0] as (typeof arrivals)[number]);
        else index++;
      }
      await settle();
      if (waiting.wakeUntil(clock.now()) > 0) continue;
      const pending = waiting.pending;
      if (pending.length === 0) {
        const wake = waiting.nextWake();
        if (wake !== undefined) clock.reach(wake);
        else {
          const next = arrivals.find(mayArrive);
          if (next) step = Math.max(step, next.at);
          else break;
        }
        continue;
      }
      if (step >= MAX_STEPS) {
        failures.push({ rule: 'run-ends', message: `still ${pending.length} calls waiting after ${MAX_STEPS} steps` });
        break;
      }
      const call = strategy.choose(pending, step);
      const others = pending.filter((other) => other !== call);
      waiting.take(call);
      order.push(call.id);
      const fault = settling ? undefined : faultFor(call, others, recent.filter(({ at }) => at >= clock.now() - HELD_FOR_MS).map(({ call: held }) => held));
      released.push(call);
      const line = `${padded(step, call.actor)}${call.shape.text}`;
      if (fault) {
        faults.set(call.id, fault);
        running.get(call.actor)?.faultsAt.push(step);
        faultsMet.push({ step, actor: call.actor, items: call.shape.items });
      }
      if (fault?.kind === 'throttled' && isTransaction(call)) {
        story.push(`${line} -> refused: ThrottlingError on item ${(fault.item ?? 0) + 1}`);
        call.reject(cancellation(call.shape.items.length, fault.item ?? 0, 'ThrottlingError'));
      } else if (fault?.kind === 'throttled') {
        story.push(`${line} -> refused: throttled`);
        call.reject(throttled());
      } else if (fault?.kind === 'conflict') {
        story.push(`${line} -> refused: TransactionConflict on item ${(fault.item ?? 0) + 1}`);
        call.reject(cancellation(call.shape.items.length, fault.item ?? 0, 'TransactionConflict'));
      } else if (fault?.kind === 'crash-before') {
        story.push(`${line} -> not sent: the instance dies`);
        die(call.actor);
      } else {
        let output: unknown;
        let failed: unknown;
        try {
          output = await store.send(call.command as Parameters<typeof store.send>[0]);
        } catch (error) {
          // Only DynamoDB's answers go to the code; DynamoDB Local failing to answer ends the run, or
          // a run would no longer be its seed's.
          if (!isAnswer(error)) throw new Error(`The store of record failed at step ${step}: ${(error as Error).name}: ${(error as Error).message}`, { cause: error });
          failed = error;
        }
        const outcome = failed === undefined ? outcomeOf(call.shape.operation, output) : errorOutcome(failed);
        reached.push({ step, actor: call.actor, items: call.shape.items, committed: failed === undefined && call.shape.writes, checks: call.shape.checks });
        recent.push({ call, at: clock.now() });
        if (recent.length > 64) recent.shift();
        // The table after every commit: what a line could take, and what a read could answer, at each moment.
        if (failed === undefined && call.shape.writes) {
          timeline.push({ step, at: clock.now(), inventory: await readInventory(store, tableName) });
        }
        if (fault?.kind === 'lost-reply') {
          story.push(`${line} -> ${outcome}, its answer lost`);
          call.reject(answerLost());
        } else if (fault?.kind === 'crash-after') {
          story.push(`${line} -> ${outcome}, and the instance dies before the answer`);
          die(call.actor);
        } else {
          story.push(`${line} -> ${outcome}`);
          if (failed === undefined) call.resolve(output);
          else call.reject(failed);
        }
      }
      step++;
      clock.advance(steps.int(1, 5));
    }
  };

  const run = async (): Promise<RunRecord> => {
  await runUntilQuiet();
  if (failures.length > 0) return finished();
  // Clients that follow the docs finish what they started: a PATCH, an adjustment or an import that
  // got no final answer is sent until it gets one (and the engine runs an import's file to its end) (a change cut off has moved only some lines), and every batch is read once,
  // which moves one that a write cut off left among those with stock with none.
  settling = true;
  const lastAttempts = new Map(answers.map((answer) => [answer.send.id, answer]));
  for (const last of lastAttempts.values()) {
    const finishes = last.send.kind === 'import-file' || (last.send.kind === 'http' && ['PATCH /batches/{ref}', 'POST /adjustments', 'POST /imports'].includes(last.send.routeKey));
    if (finishes && (last.died || (last.status ?? 0) >= 500)) {
      arrivals.push({ send: last.send, attempt: last.attempt + 1, at: step });
    }
  }
  const { references } = await readInventory(store, tableName);
  references.forEach(({ ref }, index) => {
    arrivals.push({ send: { kind: 'http', id: SETTLING_IDS_FROM + index, at: step, routeKey: 'GET /batches/{ref}', path: { ref } }, attempt: 1, at: step });
  });
  story.push(`${padded(step, '')}the clients finish: no more faults`);
  await runUntilQuiet();
  return finished();
  };
  const finished = async (): Promise<RunRecord> => {
  const readAt = clock.now();
  const inventory = await readInventory(store, tableName);
  for (const { rule, message } of findViolations(inventory, readAt)) failures.push({ rule, message });
  const changed = reached.filter(({ committed }) => committed).reduce((sum, { items, checks }) => sum + items.length - checks, 0);
  const events = await streamEvents(storeOfRecord, tableName, changed);
  failures.push(...judgeEvents(events, inventory));
  failures.push(...judgeAgainstModel(answers, reached, timeline));
  const stored = await storedForJudges(store, tableName);
  failures.push(...judgeAdjustments(answers, reached, timeline, stored.adjustments));
  failures.push(...judgeImports(reached, stored));
  failures.push(...judgePromises(answers, reached));
  failures.push(...judgeFields(answers, reached, timeline));
  failures.push(...judgeHistory(answers, timeline));
  failures.push(...judge({ answers, reached, faultsMet, inventory, mode: settings.mode }));
  return { plan, story, order, faults, delays, answers, reached, failures, calls: order.length, events: events.length, conflictOrders: conflictOrdersOf(released, answers) };
  };
  return run();
};

/** A moment as a count's `counted_at` writes it: in UTC, or at an offset from it of so many minutes. */
const writtenAt = (moment: number, offsetMinutes?: number): string => {
  if (offsetMinutes === undefined) return new Date(moment).toISOString();
  const local = new Date(moment + offsetMinutes * 60_000).toISOString().slice(0, -1);
  const minutes = Math.abs(offsetMinutes);
  return `${local}${offsetMinutes < 0 ? '-' : '+'}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
};

/**
 * What the judges of adjustments and imports read at the end: the adjustments, each written once
 * and kept (docs/api.md), so the end's are every one the run made; the imports' records, checks and
 * chunks, kept as long as their imports; and the import rows that added a batch.
 */
const storedForJudges = async (store: DynamoDBDocumentClient, tableName: string): Promise<StoredImports> => {
  const adjustments: Adjustment[] = [];
  const items: StoredImportItem[] = [];
  const addedBy: string[] = [];
  let startKey: ScanCommandOutput['LastEvaluatedKey'];
  do {
    const page: ScanCommandOutput = await store.send(new ScanCommand({ TableName: tableName, ConsistentRead: true, ExclusiveStartKey: startKey }));
    for (const item of page.Items ?? []) {
      const stored = parseStoredItem(item);
      if (stored.kind === 'adjustment') adjustments.push(stored.adjustment);
      else if (stored.kind === 'import' || stored.kind === 'import-check' || stored.kind === 'import-chunk' || stored.kind === 'import-place-count') items.push(stored);
      else if (stored.kind === 'batch-reference' && typeof item[ADDED_BY] === 'string') addedBy.push(item[ADDED_BY]);
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return { adjustments, items, addedBy };
};

/** The kinds of conflicting pairs the run ordered: for two calls of different requests on one item, one a write, which came first. */
const conflictOrdersOf = (released: readonly PendingCall[], answers: readonly Answer[]): Set<string> => {
  const routeOf = new Map(answers.map(({ actor, send }) => [actor, send.kind === 'http' ? send.routeKey : send.kind]));
  const kinds = new Set<string>();
  released.forEach((first, index) => {
    for (const second of released.slice(index + 1)) {
      if (first.actor === second.actor || !(first.shape.writes || second.shape.writes) || !itemsMeet(first.shape.items, second.shape.items)) continue;
      kinds.add(`${routeOf.get(first.actor)} ${first.shape.operation} < ${routeOf.get(second.actor)} ${second.shape.operation}`);
    }
  });
  return kinds;
};
