import type { Position } from './locations';

/*
 * What a request says of where its lines may come from (routing.ts, which acts on it). Apart from
 * routing.ts so that model.ts, whose lines record it and which routing.ts reads, need not import
 * routing.ts back.
 */

/** Where an order's goods go: a country (ISO 3166-1 alpha-2), and the point they go to when known, for the distance. */
export interface Destination {
  readonly country: string;
  readonly position?: Position;
}

/** What a request says of where its lines may come from: both absent, any active location. */
export interface Routing {
  readonly destination?: Destination;
  readonly location?: string;
}
