import { describe, expect, it } from 'vitest';
import type { Batch } from '../../domain/model';
import { availableWrites, batchChangeWrites, batchMoveWrites } from '../../functions/store/batches';
import { writesOf } from '../../functions/store/pieces';
import { systemWorld } from '../../functions/store/world';

// A batch kept whole's writes (batches.ts) and a spread batch's (pieces.ts): writesOf picks one by
// the batch as read, and the first refuse a spread batch outright rather than write its item wrong.

const whole: Batch = { ref: 'b1', sku: 'LAMP', qty: 20, available: 10, eta: null, held: 2 };
// 10 available: 4 of the item's own, 6 in two pieces; held 2, on a piece.
const spread: Batch = { ...whole, spreadId: 'spread-1', pieces: [{ piece: 0, available: 3, held: 2 }, { piece: 1, available: 3, held: 0 }] };

describe("a batch kept whole's writes", () => {
  it('are made for a batch kept whole', () => {
    expect(availableWrites('t', whole, -3)).toHaveLength(1);
    expect(availableWrites('t', whole, -10, '2026-11-29T10:15:00.000Z')).toHaveLength(1);
    expect(batchChangeWrites('t', whole, { ...whole, qty: 5, available: -5 })).toHaveLength(2);
    expect(batchMoveWrites('t', whole, { ...whole, available: 0, held: 0 })).toHaveLength(2);
  });

  it('throw for a spread batch, whose item holds only part of its units and held units', () => {
    expect(() => availableWrites('t', spread, -3)).toThrow(/batch b1 as kept whole, but it is spread over 2 pieces/);
    expect(() => availableWrites('t', spread, 3)).toThrow(/spread/);
    expect(() => batchChangeWrites('t', spread, { ...spread, qty: 18, available: 8 })).toThrow(/spread/);
    expect(() => batchChangeWrites('t', spread, { ...spread, qty: 8, available: -2, held: 0 })).toThrow(/spread/);
    expect(() => batchMoveWrites('t', spread, { ...spread, available: 0 })).toThrow(/spread/);
  });

  it('are never what writesOf gives a spread batch', () => {
    const writes = writesOf(spread);
    expect(writes.giveBack('t', spread, 3)).toHaveLength(1);
    expect(writes.change('t', spread, { ...spread, qty: 18, available: 8 })).toHaveLength(1);
    expect(writes.take('t', spread, 3, new Date().toISOString(), () => false, systemWorld).items).toHaveLength(1);
  });
});
