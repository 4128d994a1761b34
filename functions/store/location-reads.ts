import type { Instant } from '../../domain/holds';
import type { Location } from '../../domain/locations';
import { type ConditionalWrite, type LocationRevision, ROUTING_LOCATIONS_MAX_AGE_MS, type StoredLocation } from '../../domain/ports';
import { logger } from '../telemetry';
import { parseStoredItem } from './items';
import { LOCATIONS_PARTITION, locationKey, locationWrite } from './locations';
import type { StoreCalls } from './store-calls';
import type { TableReads } from './table-reads';
import type { World } from './world';

/**
 * How soon after a read of the locations a request naming a location they lack reads them anew: a
 * location made since is found within a second, and requests naming one that does not exist read
 * the locations' partition at most once a second per process, not once each.
 */
export const UNKNOWN_LOCATION_REREAD_MS = 1_000;

/**
 * The locations a process keeps for routing (BatchRepository.routingLocations): every allocation,
 * order and hold routes by them, and reading their one partition for each would bind the whole
 * table's allocations to that partition's 3,000 reads a second (docs/capacity.md, "Locations read
 * by routing"). Kept as read at most `maxAgeMs` ago, one read shared by the requests that find them
 * stale at once; a read that failed is not kept. A write of a location through the
 * process, and a read of them all, replace what is kept; a read sent before a write through the
 * process is not kept after it (the generation), so a list read as the write was made is not taken
 * for the written one. Their age is by the world's clock, which a test or the simulator sets.
 */
export class RoutingLocations {
  private kept?: { readonly at: number; readonly locations: Promise<Location[]> };
  private generation = 0;

  constructor(
    private readonly world: Pick<World, 'now'>,
    private readonly maxAgeMs = ROUTING_LOCATIONS_MAX_AGE_MS,
  ) {}

  /**
   * The locations kept, or read by `load` when they are older than `maxAgeMs`, or than
   * `refreshAfterMs` when given. A request that was waiting on another's read that failed (cut by
   * that request's deadline, in a process serving many at once) reads once more for itself.
   */
  async read(load: () => Promise<Location[]>, refreshAfterMs = this.maxAgeMs, mayReadAgain = true): Promise<Location[]> {
    const kept = this.kept;
    if (!kept || this.world.now() - kept.at >= refreshAfterMs) return this.load(load);
    if (!mayReadAgain) return kept.locations;
    try {
      return await kept.locations;
    } catch {
      return this.read(load, refreshAfterMs, false);
    }
  }

  /** Starts a read of them all whose result `keep` keeps, unless a write through the process came between. */
  readStarted(): { readonly at: number; readonly generation: number } {
    return { at: this.world.now(), generation: this.generation };
  }

  keep(locations: Location[], started: { readonly at: number; readonly generation: number }): void {
    if (started.generation === this.generation) this.kept = { at: started.at, locations: Promise.resolve(locations) };
  }

  forget(): void {
    this.generation++;
    this.kept = undefined;
  }

  private load(load: () => Promise<Location[]>): Promise<Location[]> {
    // Dated when the read is sent: what it finds is at most that old.
    const kept = { at: this.world.now(), locations: load() };
    this.kept = kept;
    kept.locations.catch(() => {
      if (this.kept === kept) this.kept = undefined;
    });
    return kept.locations;
  }
}

/** The reads of locations and the write of one, for the repository (functions/store/locations.ts has their items). */
export class LocationReads {
  constructor(
    private readonly reads: TableReads,
    private readonly calls: StoreCalls,
    private readonly tableName: string,
    private readonly routing: RoutingLocations,
  ) {}

  async all(): Promise<Location[]> {
    const started = this.routing.readStarted();
    const locations = await this.stored();
    this.routing.keep(locations, started);
    return locations;
  }

  /** As kept for routing; anew, unless read less than UNKNOWN_LOCATION_REREAD_MS ago, when `naming` names one they lack. */
  async forRouting(naming: readonly string[] = []): Promise<Location[]> {
    const kept = await this.routing.read(() => this.stored());
    if (naming.every((id) => kept.some((location) => location.id === id))) return kept;
    return this.routing.read(() => this.stored(), UNKNOWN_LOCATION_REREAD_MS);
  }

  async one(id: string): Promise<StoredLocation | undefined> {
    const item = await this.reads.item(locationKey(id));
    const stored = item && parseStoredItem(item);
    if (stored && stored.kind !== 'location') throw new Error(`Item at the key of location ${id} is not a location: ${JSON.stringify(stored)}`);
    return stored && { location: stored.location, revision: stored.revision };
  }

  /** The location written at `now`, replacing the revision read, when given. */
  async save(location: Location, now: Instant, replacing?: LocationRevision): Promise<ConditionalWrite> {
    try {
      return await this.calls.conditionalWrite([locationWrite(this.tableName, location, now, replacing)]);
    } finally {
      // Whatever came of it, this process routes its next request by the locations as they are then.
      this.routing.forget();
    }
  }

  /**
   * Every location stored. An item of their partition that is not one (written by hand) is left
   * out and logged: routing goes on by the others rather than refusing every request with a 500.
   */
  private async stored(): Promise<Location[]> {
    return (await this.reads.partition(LOCATIONS_PARTITION)).flatMap((item) => {
      const stored = parseStoredItem(item);
      if (stored.kind === 'location') return [stored.location];
      logger.error({ message: 'Item in the locations partition is not a location; routing leaves it out', item });
      return [];
    });
  }
}
