import type { Instant } from '../../domain/holds';
import type { Location, Position } from '../../domain/locations';
import type { LocationRevision } from '../../domain/ports';
import { ITEM_IS_NEW } from './conditions';
import { PK, isAt, isNumber, isText, itemKey } from './fields';
import type { TransactWriteItem } from './store-calls';
import { partitionKeyPrefix } from './table';

/*
 * Locations (items.ts, "The table's items"): few, and changed rarely, so each is an item in the one
 * partition they share, and reading them all is one Query of it. The built-in `default` has no item
 * until a client replaces it (domain/locations.ts). Their key, item and parser, the write that
 * stores one, and the check a new batch's transaction makes that its location exists.
 */

export const LOCATIONS_PARTITION = partitionKeyPrefix.locations;

export const locationKey = (id: string) => itemKey(LOCATIONS_PARTITION, id);

/** The store's own count of a location's writes, which a replacement's condition compares: 1 for the first. */
const revisionOf = (revision: LocationRevision): number => revision as unknown as number;
const asRevision = (revision: number): LocationRevision => revision as unknown as LocationRevision;

/** A location as the table holds it; `changedAt`, when this revision was written, is its LocationChanged's time. */
const locationItem = ({ id, name, priority, serves, active, position, handlingDays, transitDays }: Location, revision: number, changedAt: Instant) => ({
  ...locationKey(id),
  type: 'Location',
  id,
  name,
  priority,
  serves: [...serves],
  active,
  ...(position ? { position: { lat: position.lat, lng: position.lng } } : {}),
  ...leadTimesOf({ handlingDays, transitDays }),
  revision,
  changedAt: new Date(changedAt).toISOString(),
});

const parsePosition = (value: unknown): Position | undefined => {
  const { lat, lng } = (value ?? {}) as Record<string, unknown>;
  return isNumber(lat) && isNumber(lng) ? { lat, lng } : undefined;
};

/** A location's handling and transit days, each where it has them: an empty `transitDays` says no more than none. */
export const leadTimesOf = ({ handlingDays, transitDays }: Pick<Location, 'handlingDays' | 'transitDays'>) => ({
  ...(handlingDays === undefined ? {} : { handlingDays }),
  ...(transitDays === undefined || Object.keys(transitDays).length === 0 ? {} : { transitDays: { ...transitDays } }),
});

const parseTransitDays = (value: unknown): Record<string, number> | undefined => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const entries = Object.entries(value);
  return entries.every(([, days]) => isNumber(days)) ? Object.fromEntries(entries) : undefined;
};

/** `changedAt`: when this revision of it was written. */
export type StoredLocationItem = { readonly kind: 'location'; readonly location: Location; readonly revision: LocationRevision; readonly changedAt: string };

/** A location's item, read back through its key. */
export const parseLocationItem = (item: Record<string, unknown>): StoredLocationItem | undefined => {
  const { id, name, priority, serves, active, position, handlingDays, transitDays, revision, changedAt } = item;
  if (!isText(id) || !isAt(item, locationKey(id))) return undefined;
  const parsedPosition = position === undefined ? undefined : parsePosition(position);
  const servesCodes = Array.isArray(serves) && serves.length > 0 && serves.every(isText);
  if (!isText(name) || !isNumber(priority) || !servesCodes || typeof active !== 'boolean' || (position !== undefined && !parsedPosition)) return undefined;
  const parsedTransit = transitDays === undefined ? undefined : parseTransitDays(transitDays);
  if ((handlingDays !== undefined && !isNumber(handlingDays)) || (transitDays !== undefined && !parsedTransit)) return undefined;
  if (!isNumber(revision) || !isText(changedAt)) return undefined;
  const location: Location = {
    id,
    name,
    priority,
    serves,
    active,
    ...(parsedPosition ? { position: parsedPosition } : {}),
    ...leadTimesOf({ ...(handlingDays === undefined ? {} : { handlingDays }), ...(parsedTransit ? { transitDays: parsedTransit } : {}) }),
  };
  return { kind: 'location', location, revision: asRevision(revision), changedAt };
};

/**
 * The location stored whole at `now` (a missing position removed): replacing the revision read, on
 * condition that it is still the one stored, or, without one, on condition that none is stored under
 * its id. This guards "a replacement is decided on the location as it is": a change made between the
 * read and the write fails the condition, to be read and compared again, so an identical repeat never
 * writes (and never announces a LocationChanged), and no change is overwritten unseen.
 */
export const locationWrite = (tableName: string, location: Location, now: Instant, replacing?: LocationRevision): TransactWriteItem => {
  const revision = replacing === undefined ? 1 : revisionOf(replacing) + 1;
  return {
    Put: {
      TableName: tableName,
      Item: locationItem(location, revision, now),
      ...(replacing === undefined
        ? { ConditionExpression: ITEM_IS_NEW }
        : { ConditionExpression: 'revision = :revision', ExpressionAttributeValues: { ':revision': revisionOf(replacing) } }),
    },
  };
};

/**
 * A check, in a new batch's transaction, that its location is stored: guards "every batch is at a
 * location that exists" without a read before the write. Locations are never removed, so once the
 * batch is written its location stays.
 */
export const locationExistsCheck = (tableName: string, id: string): TransactWriteItem => ({
  ConditionCheck: { TableName: tableName, Key: locationKey(id), ConditionExpression: `attribute_exists(${PK})` },
});
