/*
 * The cursors of the pages a client reads (docs/api.md, "History", "Listings"): a position in a
 * list as opaque, URL-safe text, and back. Each list says what its position holds and checks it.
 */

/** The cursor a client sends for a position of these parts. */
export const cursorOfParts = (parts: readonly unknown[]): string => Buffer.from(JSON.stringify(parts), 'utf8').toString('base64url');

/** The parts a cursor holds, or undefined for a string that is no cursor of this service's making: too long, not base64url, or not `length` parts of JSON. */
export const partsOfCursor = (cursor: string, maxCharacters: number, length: number): unknown[] | undefined => {
  if (cursor.length > maxCharacters || !/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  return Array.isArray(parsed) && parsed.length === length ? parsed : undefined;
};
