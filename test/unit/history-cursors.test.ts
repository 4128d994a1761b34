import { describe, expect, it } from 'vitest';
import { cursorOf, positionOf } from '../../domain/stock-history';

describe("a history page's cursor", () => {
  const position = { ref: 'batch-1', at: '2026-12-01T09:30:00.000Z', reason: 'shipped' as const, id: 'parcel-1' };

  it('names the position it was made of, and is safe in a URL', () => {
    const cursor = cursorOf(position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(positionOf(cursor)).toEqual(position);
  });

  it('names a position whose ids are any text an identifier may be', () => {
    const emoji = { ...position, ref: '📦'.repeat(128), id: `${'é'.repeat(128)}#given back` };
    expect(positionOf(cursorOf(emoji))).toEqual(emoji);
  });

  it('is refused when it is not one the service made', () => {
    const made = (parts: unknown) => Buffer.from(JSON.stringify(parts)).toString('base64url');
    for (const cursor of [
      '',
      'not a cursor',
      'bm90IGpzb24',
      made({ ref: 'batch-1' }),
      made(['batch-1', '2026-12-01T09:30:00.000Z', 'shipped']),
      made(['batch-1', 'yesterday', 'shipped', 'parcel-1']),
      made(['batch-1', '2026-12-01T09:30:00.000Z', 'stolen', 'parcel-1']),
      made(['', '2026-12-01T09:30:00.000Z', 'shipped', 'parcel-1']),
      made(['batch-1', '2026-12-01T09:30:00.000Z', 'shipped', 7]),
      'A'.repeat(4_097),
      made(['📦'.repeat(129), '2026-12-01T09:30:00.000Z', 'shipped', 'parcel-1']),
      made(['batch-1', '2026-12-01T09:30:00.000Z', 'shipped', 'é'.repeat(300)]),
    ]) {
      expect(positionOf(cursor), cursor).toBeUndefined();
    }
  });
});
