/** The value below which `fraction` of the samples lie (nearest rank), e.g. 0.5 for the median. */
export const percentile = (samples: readonly number[], fraction: number): number => {
  if (samples.length === 0) throw new Error('No samples');
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil(fraction * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
};

export const median = (samples: readonly number[]): number => percentile(samples, 0.5);

export const round = (value: number, digits = 1): number => Math.round(value * 10 ** digits) / 10 ** digits;
