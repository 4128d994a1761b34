import type { Position } from '../../domain/locations';
import type { Routing } from '../../domain/routing';
import { isNumber, isText } from './fields';

/*
 * The routing a line or a hold records (Allocation.routing, Hold.routing: what its request named of
 * where its lines may come from), as one map attribute `routing` of its item, shaped as the request's
 * fields: `{destination?: {country, position?: {lat, lng}}, location?}`. Written only when the request
 * named something, so items written before lines recorded it need no migration: they read as naming
 * neither. One map rather than attributes of their own, so that no name of the item's own fields
 * (`location`, which an item may carry for its batch's location) can mean the request's.
 */

const ROUTING = 'routing';

/** The attribute that records the routing, or none when there is none to record. */
export const routingFields = (routing: Routing | undefined): { readonly routing?: Routing } => (routing === undefined ? {} : { [ROUTING]: routing });

const parsePosition = (value: unknown): Position | undefined => {
  const { lat, lng } = (value ?? {}) as Record<string, unknown>;
  return isNumber(lat) && isNumber(lng) ? { lat, lng } : undefined;
};

/** The routing an item records: `{}` for none; undefined when its attribute is not a routing. */
export const parseRouting = (item: Record<string, unknown>): { readonly routing?: Routing } | undefined => {
  const value = item[ROUTING];
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null) return undefined;
  const { destination, location } = value as Record<string, unknown>;
  if (location !== undefined && !isText(location)) return undefined;
  if (destination === undefined) return location === undefined ? undefined : { routing: { location } };
  const { country, position } = (destination ?? {}) as Record<string, unknown>;
  const parsedPosition = position === undefined ? undefined : parsePosition(position);
  if (!isText(country) || (position !== undefined && !parsedPosition)) return undefined;
  return { routing: { destination: { country, ...(parsedPosition ? { position: parsedPosition } : {}) }, ...(location === undefined ? {} : { location }) } };
};
