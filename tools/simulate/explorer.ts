import { explore } from './explore';
import type { ExplorerMessage, ExplorerOrders } from './explorers';
import { memoryStoreOfRecord } from './memory-store';
import { storeOfRecord } from './store-of-record';
import { storyOf } from './story';

/* One explorer process of `npm run simulate -- --seconds N` (./explorers.ts). */

const tell = (message: ExplorerMessage): Promise<void> => new Promise((done) => process.send?.(message, () => done()));

process.once('message', async ({ seconds, endpoint, firstSeed, stride, plant }: ExplorerOrders) => {
  const store = endpoint === undefined ? memoryStoreOfRecord() : storeOfRecord(endpoint);
  const found = await explore(seconds, store, (explored) => void tell({ kind: 'ran', explored }), firstSeed, stride, (seed, foundAfterSeconds) => void tell({ kind: 'failing', seed, foundAfterSeconds }), plant);
  if (found.failed) {
    const { seed, run, shrunk, foundAfterSeconds } = found.failed;
    await tell({ kind: 'failed', seed, foundAfterSeconds, sizes: `${run.plan.workload.length} sends, ${run.calls} calls, ${run.faults.size} faults, ${run.delays.size} slow calls`, story: storyOf(shrunk ?? run) });
  } else await tell({ kind: 'finished' });
  store.destroy();
  // The requests a run's crashes left waiting hold timers of their own: nothing of them is owed.
  process.exit();
});
