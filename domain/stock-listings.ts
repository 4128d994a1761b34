import { cursorOfParts, partsOfCursor } from './cursors';
import type { StockTotals } from './model';

/*
 * Lists of SKUs read a page at a time (docs/api.md, "Listings"): every SKU, or those stocked at one
 * location, each with its levels as GET /skus/{sku}/stock reads them.
 */

/** Which SKUs a list holds: every SKU ever added, or every SKU a batch of which was ever at the location. */
export type SkuList = { readonly kind: 'all' } | { readonly kind: 'location'; readonly location: string };

/**
 * Where a page ends among a list's SKUs: the store keeps a list in a few parts, each sorted by SKU,
 * and reads them one after another, so a position is a part and the last SKU read in it.
 */
export interface ListPosition {
  readonly part: number;
  readonly sku: string;
}

export interface ListRequest {
  readonly limit: number;
  readonly after?: ListPosition;
}

/** A page of a list's SKUs, as the store reads it; `next` where the next page starts, none once the list has no more. */
export interface ListedSkus {
  readonly skus: readonly string[];
  readonly next?: ListPosition;
}

/** A SKU's levels on a page: in all, or at the list's location. `available`: the units no line or hold has, on the shelf and in shipments. */
export interface ListedStock extends StockTotals {
  readonly sku: string;
  readonly available: number;
}

export interface StockListPage {
  readonly entries: readonly ListedStock[];
  readonly next?: ListPosition;
}

/** The most SKUs a page has, and how many when the request does not say. */
export const MAX_LIST_LIMIT = 100;
export const DEFAULT_LIST_LIMIT = 50;

/** The most characters a list's cursor has: a part and an identifier of at most 512 bytes, in base64. */
export const MAX_LIST_CURSOR_CHARACTERS = 1_024;

/** An identifier's most bytes in UTF-8: 128 code points of 4 bytes. */
const MAX_ID_BYTES = 512;

/** More parts than any store keeps a list in: a position past them names the end of the list. */
const MAX_PARTS = 1_000;

/** The cursor a client sends for `position`: opaque, URL-safe. */
export const listCursorOf = ({ part, sku }: ListPosition): string => cursorOfParts([part, sku]);

/** The position a cursor names, or undefined for a string that is no list cursor this service made. */
export const listPositionOf = (cursor: string): ListPosition | undefined => {
  const parsed = partsOfCursor(cursor, MAX_LIST_CURSOR_CHARACTERS, 2);
  if (!parsed) return undefined;
  const [part, sku] = parsed;
  if (!Number.isInteger(part) || (part as number) < 0 || (part as number) >= MAX_PARTS) return undefined;
  if (typeof sku !== 'string' || sku === '' || new TextEncoder().encode(sku).length > MAX_ID_BYTES) return undefined;
  return { part: part as number, sku };
};
