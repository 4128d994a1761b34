import { CLIENT_ALONE, CLIENT_ALONE_ALIASED } from './bundles';
import { FEED_ROWS, LARGE_FEED_ROWS, MAX_RSS_GROWTH, MIN_REPEAT_SPEEDUP } from './imports';
import { HOT_SKU_TARGET_RATIO, type SkuLoad } from './hot-sku';
import { round } from './stats';
import { callsWithCapacity, type BenchResults, type Target, MAX_INIT_RATIO, MIN_THROUGHPUT_RATIO_AT_16, MAX_P99_RATIO_AT_16, MAX_EVENT_DELAY_MS, INITIALIZED, FUNCTIONS, bytesOf, initOf, initRatioOf, expectedHoldCalls, countsText, linesText, countText, noneAndMost, type UnderHoldsCost, sameCost, DROP_MODES, TARGET } from './targets';
const kb = (bytes: number) => `${round(bytes / 1024)} KB`;
const ms = (milliseconds: number) => `${round(milliseconds)} ms`;
const us = (microseconds: number) => `${Math.round(microseconds)} µs`;
const ratio = (value: number) => `${round(value, 2).toFixed(2)}x`;
const verdict = (targets: readonly Target[], name: string) => (targets.find((target) => target.name === name)?.met ? 'met' : 'MISSED');
/** The figures as one Markdown table, readable in a terminal and ready for docs/performance.md. */
export const renderTable = (results: BenchResults, targets: readonly Target[]): string => {
  const { coldInit, warmOverhead, throughput, requestCost } = results;
  const rows: string[][] = [['Figure', 'Service', 'Floor', 'Ratio', 'Target']];

  const clientAlone = (figure: (name: string) => string) =>
    `${figure(CLIENT_ALONE)} client alone (${figure(CLIENT_ALONE_ALIASED)} with the alias)`;
  for (const name of FUNCTIONS) {
    rows.push([
      `bundle ${name}.mjs`,
      kb(bytesOf(results, name)),
      // The consumer talks to EventBridge: the DynamoDB client is no floor of it.
      (INITIALIZED as readonly string[]).includes(name) ? clientAlone((floor) => kb(bytesOf(results, floor))) : '',
      '',
      `<= 400 KB: ${verdict(targets, TARGET.bundleSize(name))}`,
    ]);
  }
  for (const handler of INITIALIZED) {
    rows.push([
      `cold init ${handler}, median of ${coldInit.processes}`,
      ms(initOf(results, handler)),
      `${ms(initOf(results, CLIENT_ALONE))} client alone`,
      ratio(initRatioOf(results, handler)),
      `<= ${MAX_INIT_RATIO}x: ${verdict(targets, TARGET.initRatio(handler))}`,
    ]);
  }
  // For information: the same ratio had the floor been built with the handlers' credential alias.
  for (const handler of INITIALIZED) {
    rows.push([
      `cold init ${handler}, against the client alone with the alias`,
      ms(initOf(results, handler)),
      `${ms(initOf(results, CLIENT_ALONE_ALIASED))} client alone with the alias`,
      ratio(initRatioOf(results, handler, CLIENT_ALONE_ALIASED)),
      '',
    ]);
  }
  for (const handler of INITIALIZED) {
    rows.push([`cold init ${handler}, NODE_OPTIONS=--enable-source-maps`, ms(initOf(results, `${handler} (source maps)`)), '', '', '']);
  }
  for (const [route, overhead] of [['POST /allocate', warmOverhead.allocate], ['POST /add_batch', warmOverhead.addBatch]] as const) {
    rows.push([`warm ${route}, store stubbed, median / p99`, `${us(overhead.medianMicroseconds)} / ${us(overhead.p99Microseconds)}`, '', '', '']);
  }
  for (const { inFlight, floor, service, throughputRatio, p99Ratio } of throughput.comparisons) {
    const targeted = inFlight === 16;
    rows.push([
      `allocations/s, ${inFlight} in flight`,
      `${Math.round(service.perSecond)}/s`,
      `${Math.round(floor.perSecond)}/s`,
      ratio(throughputRatio),
      targeted ? `>= ${MIN_THROUGHPUT_RATIO_AT_16}x: ${verdict(targets, TARGET.throughputRatio)}` : '',
    ]);
    rows.push([
      `latency p50 / p99, ${inFlight} in flight`,
      `${ms(service.p50Ms)} / ${ms(service.p99Ms)}`,
      `${ms(floor.p50Ms)} / ${ms(floor.p99Ms)}`,
      `p99 ${ratio(p99Ratio)}`,
      targeted ? `p99 <= ${MAX_P99_RATIO_AT_16}x: ${verdict(targets, TARGET.p99Ratio)}` : '',
    ]);
  }
  rows.push(['store calls per allocate', callsWithCapacity(requestCost.allocate), 'Query + TransactWriteItems', '', verdict(targets, TARGET.allocateCalls)]);
  rows.push([
    'store calls per allocate split over batches at two locations',
    callsWithCapacity(requestCost.splitAllocate),
    'Query + TransactWriteItems',
    '',
    verdict(targets, TARGET.splitAllocateCalls),
  ]);
  rows.push(['store calls per add_batch', callsWithCapacity(requestCost.addBatch), 'TransactWriteItems', '', verdict(targets, TARGET.addBatchCalls)]);
  rows.push(['store calls per shipment of one whole line', callsWithCapacity(requestCost.shipment), callsWithCapacity(requestCost.allocate), '', '']);
  rows.push(['store calls per adjustment by a delta', callsWithCapacity(requestCost.adjustment), callsWithCapacity(requestCost.allocate), '', '']);
  rows.push(['store calls per count as of a minute ago, a shipment since', callsWithCapacity(requestCost.count), callsWithCapacity(requestCost.allocate), '', '']);
  rows.push(["store calls per page of a SKU's history", callsWithCapacity(requestCost.history), callsWithCapacity(requestCost.allocate), '', '']);
  rows.push([
    'store calls per allocate routed to a destination, the SKU at 3 locations',
    callsWithCapacity(requestCost.routedAllocate),
    callsWithCapacity(requestCost.allocate),
    '',
    verdict(targets, TARGET.routedAllocateCost),
  ]);
  const { activeHolds, expiredHolds, calls: underHolds } = results.allocateUnderHolds;
  rows.push([
    `store calls per allocate, its batch carrying ${activeHolds} active and ${expiredHolds} expired holds`,
    callsWithCapacity(underHolds),
    'Query + TransactWriteItems',
    '',
    verdict(targets, TARGET.allocateUnderHoldsCalls),
  ]);
  rows.push([
    `read units of one allocate, SKU with ${results.readUnitsByHistory.map(({ exhaustedBatches }) => exhaustedBatches).join(' / ')} exhausted batches`,
    results.readUnitsByHistory.map(({ readUnits }) => readUnits ?? '?').join(' / '),
    '',
    '',
    `the same: ${verdict(targets, TARGET.flatReadCost)}`,
  ]);
  const patch = results.patchMovingLines;
  rows.push([
    `PATCH moving ${patch.linesMoved} lines: time, calls`,
    `${ms(patch.milliseconds)}, ${Object.entries(patch.calls).map(([operation, count]) => `${count} ${operation}`).join(' + ')}`,
    '',
    '',
    '',
  ]);
  rows.push([
    'PATCH moving lines: units per line moved, read / write',
    `${round(patch.readUnitsPerLine, 2)} / ${round(patch.writeUnitsPerLine, 2)} CU`,
    '',
    '',
    '',
  ]);
  for (const order of results.orders) {
    rows.push([
      `order of ${order.lines} lines: median time, units, calls`,
      `${ms(order.medianMilliseconds)}, ${order.readUnits} read / ${order.writeUnits} write CU, ${order.calls} calls`,
      '',
      '',
      '',
    ]);
    rows.push([
      `promise of the same ${order.lines} lines: median time, units, calls`,
      `${ms(order.promise.medianMilliseconds)}, ${order.promise.readUnits} read CU, ${order.promise.calls} calls`,
      '',
      '',
      '',
    ]);
  }
  for (const plan of results.splitLinePlans) {
    rows.push([
      `a line of ${plan.qty} split over places, ${plan.places} places of 1 batch of 10 and ${plan.smallBatchesAt} of 1: plan time, POST /allocate's / POST /orders'`,
      `${ms(plan.splitLineMs)} / ${ms(plan.planOrderMs)} (${plan.parts} parts each)`,
      '',
      '',
      '',
    ]);
  }
  for (const cost of results.holds) {
    rows.push([
      `${cost.action} a hold of ${linesText(cost.lines)}: median time, units, calls`,
      `${ms(cost.medianMilliseconds)}, ${round(cost.readUnits, 2)} read / ${cost.writeUnits} write CU, ${countsText(cost.calls)}`,
      '',
      '',
      `${countsText(expectedHoldCalls(cost))}: ${verdict(targets, TARGET.holdCalls(cost))}`,
    ]);
  }
  const { none, most } = noneAndMost(results);
  const costText = (cost: UnderHoldsCost) =>
    `${ms(cost.medianMilliseconds)}, ${round(cost.readUnits, 2)} read / ${cost.writeUnits} write CU, ${countsText(cost.calls)}`;
  if (none && most) {
    for (const cost of most.costs) {
      const without = none.costs.find(({ action }) => action === cost.action);
      rows.push([
        `${cost.action} on a batch carrying ${countText(most.activeHolds)} active holds, against none: median time, units, calls`,
        costText(cost),
        without ? `${costText(without)} with none` : '',
        without ? `time ${ratio(cost.medianMilliseconds / without.medianMilliseconds)}` : '',
        sameCost(cost, without) ? 'the same calls and units' : 'calls or units differ',
      ]);
    }
  }
  const sameAsNone = most?.costs.filter((cost) => sameCost(cost, none?.costs.find(({ action }) => action === cost.action))).length ?? 0;
  rows.push([
    `a batch carrying ${countText(most?.activeHolds ?? 0)} active holds: the time to store them; the actions that cost the same calls and units as with none`,
    most ? `${round(most.seedSeconds)} s; ${sameAsNone} of ${most.costs.length}` : '',
    '',
    '',
    `all of them: ${verdict(targets, TARGET.underActiveHolds(most?.activeHolds ?? 0))}`,
  ]);
  rows.push([
    'request log lines / HTTP requests',
    `${results.requestLog.lines} / ${results.requestLog.httpRequests}`,
    '',
    '',
    `one per request: ${verdict(targets, TARGET.requestLog)}`,
  ]);
  rows.push([
    `end-to-end delay from a 201 to its local event, median / p99 of ${results.eventDelay.allocations}`,
    `${ms(results.eventDelay.medianMs)} / ${ms(results.eventDelay.p99Ms)}`,
    '',
    '',
    `p99 <= ${MAX_EVENT_DELAY_MS / 1000} s: ${verdict(targets, TARGET.eventDelay)}`,
  ]);
  const { eventThroughput } = results;
  rows.push([
    `stream consumer's code: events/s (records/s) from ${eventThroughput.records} recorded records, EventBridge stubbed`,
    `${Math.round(eventThroughput.eventsPerSecond)}/s (${Math.round(eventThroughput.recordsPerSecond)}/s)`,
    '',
    '',
    '',
  ]);

  const refusals = (load: SkuLoad) =>
    `${load.unavailable} / ${load.conflicts} / ${load.throttles}, of ${load.allocated + load.unavailable} answers`;
  const { hotSku } = results;
  const { hot, ordinary } = hotSku;
  rows.push([
    `one hot SKU: allocations/s, ${hotSku.clients} clients, npm start over the conflict model (transactions held ${hotSku.model.holdMs} ms, ${hotSku.model.writeUnitsPerSecond} write units/s per partition key)`,
    `${round(hot.perSecond)}/s`,
    `${round(hotSku.singleItemCeilingPerSecond)}/s single-item ceiling`,
    ratio(hot.ceilingRatio),
    `>= ${hotSku.target.ceilingRatio}x the ceiling: ${hotSku.target.met ? 'met' : 'not met'}`,
  ]);
  rows.push(['one hot SKU: allocations in each second', hot.timeline.join(' '), '', '', '']);
  rows.push(['one hot SKU: 503s / conflicts / throttles', refusals(hot), '', '', '']);
  rows.push(['one hot SKU: latency p50 / p99, 201s and 503s', `${ms(hot.p50Ms)} / ${ms(hot.p99Ms)}`, '', '', '']);
  rows.push([`ordinary SKUs (${ordinary.skus}, load spread): allocations/s, the same clients and model`, `${round(ordinary.perSecond)}/s`, '', '', '']);
  rows.push(['ordinary SKUs: 503s / conflicts / throttles', refusals(ordinary), '', '', '']);
  rows.push(['ordinary SKUs: latency p50 / p99, 201s and 503s', `${ms(ordinary.p50Ms)} / ${ms(ordinary.p99Ms)}`, '', '', '']);
  const asLambda = results.hotSkuAsLambda;
  rows.push([
    `one hot SKU as Lambda serves it (npm start -- --lambda: instances serving one request at a time, each with its own state), the same clients, transactions held ${asLambda.model.holdMs} ms`,
    `${round(asLambda.hot.perSecond)}/s`,
    `${round(asLambda.singleItemCeilingPerSecond)}/s single-item ceiling`,
    ratio(asLambda.hot.ceilingRatio),
    `>= ${asLambda.target.ceilingRatio}x the ceiling: ${verdict(targets, TARGET.hotSkuAsLambdaRatio)}`,
  ]);
  rows.push(['one hot SKU as Lambda serves it: 503s / conflicts / throttles', refusals(asLambda.hot), '', '', '']);
  rows.push(['one hot SKU as Lambda serves it: latency p50 / p99, 201s and 503s', `${ms(asLambda.hot.p50Ms)} / ${ms(asLambda.hot.p99Ms)}`, '', '', '']);
  rows.push(['ordinary SKUs as Lambda serves them: allocations/s', `${round(asLambda.ordinary.perSecond)}/s`, '', '', '']);
  rows.push([
    "the tables after the rounds of both modes: npm run check's violations",
    `${hotSku.violations.length} / ${asLambda.violations.length}`,
    '',
    '',
    `0: ${verdict(targets, TARGET.hotSkuExact)}`,
  ]);

  for (const { key, label } of DROP_MODES) {
    const drop = results[key];
    const { afterwards } = drop;
    rows.push([
      `drop with carts${label}: holds placed/s, ${drop.clients} clients, npm start over the conflict model (transactions held ${drop.model.holdMs} ms, ${drop.model.writeUnitsPerSecond} write units/s per partition key)`,
      `${round(drop.placedPerSecond)}/s`,
      `${round(drop.singleItemCeilingPerSecond)}/s single-item ceiling`,
      ratio(drop.ceilingRatio),
      `>= ${drop.target.ceilingRatio}x, < ${drop.target.maxFailedShare * 100}% failed, exact, no violations: ${verdict(targets, TARGET.drop(label))}`,
    ]);
    rows.push([`drop${label}: holds placed in each second`, drop.timeline.join(' '), '', '', '']);
    rows.push([
      `drop${label}: holds placed / confirmed / released / left active`,
      `${drop.holds.placed} / ${drop.holds.confirmed} / ${drop.holds.released} / ${drop.holds.leftActive}`,
      '',
      '',
      '',
    ]);
    rows.push([
      `drop${label}: requests / failed after retries / 503s answered, retried or not / requests lost on the network / conflicts / throttles`,
      `${drop.requests} / ${drop.failed} (${round(drop.failedShare * 100, 2)}%) / ${drop.unavailable} / ${drop.networkFailures} / ${drop.conflicts} / ${drop.throttles}`,
      '',
      '',
      '',
    ]);
    rows.push([
      `drop${label}: latency p50 / p99, retries included: place, confirm, release`,
      (['place', 'confirm', 'release'] as const).map((action) => `${ms(drop.actions[action].p50Ms)} / ${ms(drop.actions[action].p99Ms)}`).join(', '),
      '',
      '',
      '',
    ]);
    rows.push([
      `drop${label} afterwards: the batch's qty = available + allocated + held; allocated and held against the holds read confirmed and active; holds whose status disagrees with their answers; npm run check's violations`,
      `${afterwards.batch.qty} = ${afterwards.batch.available} + ${afterwards.batch.allocated} + ${afterwards.batch.held}; ` +
        `${afterwards.batch.allocated} / ${afterwards.expected.allocated} and ${afterwards.batch.held} / ${afterwards.expected.held}; ${afterwards.disagreeing}; ${drop.violations.length}`,
      '',
      '',
      afterwards.exact && drop.violations.length === 0 ? 'exact' : 'NOT exact',
    ]);
  }

  const { imports } = results;
  const perSecond = (value: number) => `${Math.round(value).toLocaleString('en-US')} rows/s`;
  const mb = (bytes: number) => `${round(bytes / 1024 / 1024, 1)} MB`;
  rows.push([
    `import of ${countText(imports.rows)} new batches (a JSON Lines file, npm start's worker)`,
    `${perSecond(imports.rowsPerSecond.first)} (${ms(imports.first.ms)})`,
    `${perSecond(imports.rowsPerSecond.floor)}: addBatch alone, row after row`,
    ratio(imports.ratios.firstToFloor),
    '',
  ]);
  rows.push([
    'the same file again, a new importid: every row unchanged',
    `${perSecond(imports.rowsPerSecond.again)} (${ms(imports.again.ms)})`,
    `${ms(imports.first.ms)} the first time`,
    `${round(imports.ratios.repeatSpeedup, 1)}x faster`,
    `>= ${MIN_REPEAT_SPEEDUP}x: ${verdict(targets, TARGET.importRepeat)}`,
  ]);
  rows.push([
    `import worker's peak RSS, a feed checked whole: ${countText(LARGE_FEED_ROWS)} rows against ${countText(FEED_ROWS)}`,
    mb(imports.checked.large.peakRssBytes),
    mb(imports.checked.small.peakRssBytes),
    ratio(imports.ratios.rssGrowth),
    `<= ${MAX_RSS_GROWTH}x: ${verdict(targets, TARGET.importMemory)}`,
  ]);

  const { machine } = results;
  const notes = [
    `${results.date}, Node ${machine.node}, ${machine.cpus} CPUs, load average ${round(machine.loadAverage.atStart, 2)} at start and ${round(machine.loadAverage.atEnd, 2)} at end.`,
    'Client alone: the DynamoDB document client as the SDK ships it, the floor of the init target; with the alias: built with the credential alias of the deployed bundles too (infra/bundling.ts), for information.',
    `Throughput and latency: ${throughput.rounds} rounds of ${throughput.roundSeconds} s per side, floor and service in turn; each figure is the median of its value per round.`,
    "CU: capacity units as DynamoDB Local reports them: reads as DynamoDB bills them, a transaction's writes not as DynamoDB bills them (2 per item: docs/capacity.md).",
    `Hot and ordinary SKUs: ${hotSku.clients} clients in a closed loop for ${hotSku.roundSeconds} s each, allocating 1 unit, the hot SKU's first seconds before its batch is spread included; a 503 is counted as it comes, not retried after its Retry-After; conflicts and throttles are the requests the conflict model refused (docs/conflict-model.md), the adapter's retries among them. The single-item ceiling is 1000 / ${hotSku.model.holdMs} ms. The ${HOT_SKU_TARGET_RATIO}x target sets the exit code as every other does, in both modes; as Lambda serves it the transactions are held ${results.hotSkuAsLambda.model.holdMs} ms, since at ${hotSku.model.holdMs} ms this machine binds there, not the model (its ordinary SKUs, which meet on nothing, commit about as many).`,
    `Drop with carts: ${results.drop.clients} clients in a closed loop for ${results.drop.roundSeconds} s in each mode, each placing a hold of 1 to 3 units of one batch for 15 minutes, then confirming it (70%), releasing it (20%) or leaving it; a 503 or a lost request is sent again up to ${results.drop.retryDelaysMs.length} times (after ${results.drop.retryDelaysMs.join(', ')} ms, jittered), and a request failed only when its retries are spent; a repeat (200) after a lost answer counts as done. Afterwards every hold is read back: the batch's allocated units must be those of the holds read confirmed, its held units those of the holds read active. The single-item ceiling is 1000 / ${results.drop.model.holdMs} ms; the target holds in both modes.`,
    `Imports: each run is a process of its own over a DynamoDB Local of the imports' own, running the worker as npm start runs it (local/import-runs.ts): every row checked, then applied 25 at a time. The floor adds the same rows' batches through addBatch, one after another, into a table of its own. The peak RSS is of feeds failed by their last row (validate_first): the file streamed whole through the checks, nothing applied (its first import's peak was ${mb(imports.first.peakRssBytes)}).`,
    `Hold costs against active holds: a batch carrying none, and one carrying ${countText(most?.activeHolds ?? 0)} holds of 1 unit, stored as placing writes them but 25 items a call (tools/bench/stored-holds.ts); then ${most?.requests} rounds, each taking the two batches in turn: a hold placed and confirmed, one placed and released, and an allocate, each through the handler. The median time of each, and the units and calls of the last. The target is on the calls and units; the time is for information (DynamoDB Local's, not DynamoDB's).`,
  ];
  return [...rows.map((cells) => `| ${cells.join(' | ')} |`).toSpliced(1, 0, `|${' --- |'.repeat(rows[0]?.length ?? 0)}`), '', ...notes].join('\n');
};
