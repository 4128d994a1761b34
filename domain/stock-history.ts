import { cursorOfParts, partsOfCursor } from './cursors';
import { CHANGE_REASONS, type ChangeReason } from './adjustments';

/*
 * A SKU's history of on-hand stock (docs/api.md, "History"): every change of a batch's `qty`, and
 * every arrival of one, newest first. Allocations and holds change what is available, not what is on
 * hand: they are in the events, not here.
 */

/** What a change was: a batch added, arrived (its eta set to null), shipped from, adjusted, transferred from or to, a transfer cancelled, or changed by a PATCH. */
export const CHANGE_KINDS = ['added', 'arrived', 'shipped', 'adjusted', 'transferred_out', 'transferred_in', 'transfer_cancelled', 'patched'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** Who changed the stock when no request names a caller: the local server, and the tests. */
export const LOCAL_ACTOR = 'local';

/** One change of a batch's on-hand stock, as the history lists it. */
export interface HistoryEntry {
  /** When it happened: a count's when it was counted, which may be before changes recorded earlier. */
  readonly at: string;
  readonly kind: ChangeKind;
  readonly reason: ChangeReason;
  readonly batchref: string;
  readonly location: string;
  readonly delta: number;
  /** The batch's qty as the change's write left it. */
  readonly qtyAfter: number;
  /** The shipmentid, adjustmentid or transferid behind it; none for a PATCH or a batch added. */
  readonly reference?: string;
  readonly actor: string;
  /** Where the entry stands among the SKU's: a page that ends with it continues after it. */
  readonly position: HistoryPosition;
}

/** What tells one change from every other: its batch, its moment, its reason and an id among the batch's changes of that moment (the store's). */
export interface HistoryPosition {
  readonly ref: string;
  readonly at: string;
  readonly reason: ChangeReason;
  readonly id: string;
}

export interface HistoryPage {
  readonly entries: readonly HistoryEntry[];
  /** Where the next page starts; none once the history has no more. */
  readonly next?: HistoryPosition;
}

export interface HistoryRequest {
  readonly location?: string;
  readonly limit: number;
  readonly after?: HistoryPosition;
}

/** The most entries a page has, and how many when the request does not say. */
export const MAX_HISTORY_LIMIT = 100;
export const DEFAULT_HISTORY_LIMIT = 50;

/** The most characters a cursor has: a position names at most a few ids of MAX_IDENTIFIER_CHARACTERS and a time. */
export const MAX_CURSOR_CHARACTERS = 4_096;

/** An identifier's most bytes in UTF-8: 128 code points of 4 bytes. */
const MAX_ID_BYTES = 512;

/** A moment as the store writes them, to the millisecond in UTC. */
const MOMENT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The cursor a client sends for `position`: opaque, URL-safe. */
export const cursorOf = ({ ref, at, reason, id }: HistoryPosition): string => cursorOfParts([ref, at, reason, id]);

/** The position a cursor names, or undefined for a string that is no cursor this service made. */
export const positionOf = (cursor: string): HistoryPosition | undefined => {
  const parsed = partsOfCursor(cursor, MAX_CURSOR_CHARACTERS, 4);
  if (!parsed?.every((part) => typeof part === 'string' && part !== '')) return undefined;
  const [ref, at, reason, id] = parsed as string[];
  if (!MOMENT.test(at as string) || !CHANGE_REASONS.includes(reason as ChangeReason)) return undefined;
  // No longer than the service writes them (an identifier, and a reference with a few characters more): a key past DynamoDB's bounds is refused there.
  if (new TextEncoder().encode(ref).length > MAX_ID_BYTES || new TextEncoder().encode(id).length > MAX_ID_BYTES + 32) return undefined;
  return { ref: ref as string, at: at as string, reason: reason as ChangeReason, id: id as string };
};
