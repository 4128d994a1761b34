/**
 * The seed of a randomized suite: fixed, so `npm test` runs the same cases every time and a failure
 * can be replayed; `RELIABILITY_SEED=123 npx vitest run test/reliability` explores other cases.
 */
export const seedOr = (fixed: number): number => {
  const override = process.env.RELIABILITY_SEED;
  return override === undefined || override === '' ? fixed : Number(override);
};
