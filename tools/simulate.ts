/**
 * `npm run simulate -- --seconds N`: runs fresh seeds of the simulated world (docs/reliability.md,
 * "The simulator") for N seconds. At the first run that fails it prints `seed <S>` and the run's
 * story shrunk to the fewest sends, faults and slow calls that still fail, and exits 1; otherwise it prints the
 * runs, calls, faults and orders explored per second, and exits 0. Seeds are explored by one
 * process a core (`--explorers N` to choose).
 * `npm run simulate -- --seed S`: replays that run, printing its story (shrunk when it fails); the
 * same seed tells the same story every time. Exit 1 when it fails. `--keep FILE --defect TEXT` writes
 * the shrunk run to FILE, for the suite to replay (test/reliability/simulations/).
 * `--plant NAME` (either use) plants a defect in the service (./simulate/planted-defects.ts), to show
 * that the judge finds it; a run of it is kept with its plant, never among the service's own.
 * Against the memory store (./simulate/memory-store, held to DynamoDB Local by
 * test/reliability/memory-store.test.ts), or with `--store local` against DynamoDB Local: at
 * DYNAMODB_ENDPOINT when set, else an embedded one it starts and stops.
 */
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';

const USAGE = 'usage: npm run simulate -- (--seconds N [--explorers N] [--quiet] | --seed S [--keep FILE --defect TEXT]) [--plant NAME] [--store memory|local]';

const HELP = `${USAGE}

Runs the simulated world (docs/reliability.md, "The simulator"): concurrent requests and faults,
each run drawn from a seed, a number that picks its requests, its order of store calls and its
faults, so that the same seed tells the same story every time.

  --seconds N      explore fresh seeds for N seconds; at the first that fails, print its seed and
                   its story shrunk, and exit 1
  --explorers N    processes exploring at once (one a core when absent)
  --quiet          print no line per run
  --seed S         replay the run of seed S, printing its story
  --keep FILE      with --seed and --defect: write the shrunk run to FILE, for the suite to replay
  --defect TEXT    what the kept run found
  --plant NAME     plant a defect on purpose, to show that the judge finds it
  --store KIND     memory (the default: an in-memory store held to DynamoDB Local) or local
                   (DynamoDB Local itself)
  --help           this text`;

// Set before the functions' modules load: their logger and metrics read them once.
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
process.env.TABLE_NAME ??= 'simulated';
// DynamoDB Local on a loaded machine can take seconds over a large transaction: a call it is slow
// to answer is waited for, never cut off and sent again under the run's feet.
process.env.DYNAMODB_REQUEST_TIMEOUT_MS ??= '30000';

const main = async (): Promise<number> => {
  let options: { seconds?: string; explorers?: string; store?: string; seed?: string; quiet?: boolean; keep?: string; defect?: string; plant?: string; help?: boolean };
  try {
    ({ values: options } = parseArgs({ options: { seconds: { type: 'string' }, explorers: { type: 'string' }, store: { type: 'string', default: 'memory' }, seed: { type: 'string' }, quiet: { type: 'boolean' }, keep: { type: 'string' }, defect: { type: 'string' }, plant: { type: 'string' }, help: { type: 'boolean' } } }));
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (options.help) {
    console.log(HELP);
    return 0;
  }
  const seconds = options.seconds === undefined ? undefined : Number(options.seconds);
  const seed = options.seed === undefined ? undefined : Number(options.seed);
  const explorers = options.explorers === undefined ? availableParallelism() : Number(options.explorers);
  if ((seconds === undefined) === (seed === undefined) || (seconds !== undefined && !(seconds > 0)) || (seed !== undefined && !Number.isSafeInteger(seed)) || (options.keep === undefined) !== (options.defect === undefined) || !(Number.isSafeInteger(explorers) && explorers > 0) || !['memory', 'local'].includes(options.store ?? '')) {
    console.error(USAGE);
    return 2;
  }
  const { PLANTED_DEFECTS, isPlantedDefect } = await import('./simulate/planted-defects');
  const { plant } = options;
  if (plant !== undefined && (!isPlantedDefect(plant) || options.keep?.includes('test/reliability/simulations'))) {
    console.error(`${USAGE}\n--plant: one of ${PLANTED_DEFECTS.join(', ')}; a run of a planted defect is kept apart from the service's (test/unit/fixtures/planted-runs/)`);
    return 2;
  }
  const { storeOfRecord } = await import('./simulate/store-of-record');
  const { memoryStoreOfRecord } = await import('./simulate/memory-store');
  const { replay, storyOf } = await import('./simulate/explore');
  const onLocal = options.store === 'local';
  const local = onLocal && !process.env.DYNAMODB_ENDPOINT ? await (await import('../local/dynamodb-local')).startDynamoDbLocal() : undefined;
  const endpoint = onLocal ? (process.env.DYNAMODB_ENDPOINT ?? (local?.endpoint as string)) : undefined;
  const store = endpoint === undefined ? memoryStoreOfRecord() : storeOfRecord(endpoint);
  try {
    if (seed !== undefined) {
      const { run, shrunk } = await replay(seed, store, plant);
      console.log(storyOf(shrunk ?? run));
      if (shrunk) console.log(`\nseed ${seed}: fails (the story above is shrunk from ${run.plan.workload.length} sends, ${run.calls} calls, ${run.faults.size} faults, ${run.delays.size} slow calls)`);
      if (shrunk && options.keep && options.defect) {
        const { keepRun } = await import('./simulate/kept-runs');
        keepRun(options.keep, options.defect, shrunk);
      }
      return shrunk ? 1 : 0;
    }
    const { exploreInProcesses } = await import('./simulate/explorers');
    const found = await exploreInProcesses(seconds as number, explorers, endpoint, options.quiet ? () => {} : (line) => console.log(line), plant);
    const perSecond = (count: number) => (count / found.seconds).toFixed(1);
    console.log(
      `${found.runs} runs in ${found.seconds.toFixed(0)} s (a schedule each): ${perSecond(found.runs)} runs, ${perSecond(found.calls)} calls, ${perSecond(found.faults)} faults a second; ` +
        `${found.conflictOrders} kinds of ordered conflicting calls; ${explorers} explorers`,
    );
    if (!found.failed) return 0;
    console.log(`seed ${found.failed.seed}`);
    console.log(`found after ${found.failed.foundAfterSeconds.toFixed(0)} s; shrunk from ${found.failed.sizes}`);
    console.log(found.failed.story);
    return 1;
  } finally {
    store.destroy();
    await local?.stop();
  }
};

process.exitCode = await main();
// The requests a run's crashes left waiting hold timers of their own: nothing of them is owed.
process.exit();
