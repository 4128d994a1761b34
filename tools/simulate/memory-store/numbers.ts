import { Unsupported } from './errors';

/*
 * DynamoDB's numbers are decimal text, up to 38 significant digits, and DynamoDB Local does their
 * arithmetic in Java's BigDecimal: a value is an integer and a scale (value = unscaled x 10^-scale),
 * and what it writes back depends on both, so "1.5 - 0.5" is stored as "1.0", not "1". The same is
 * kept here, with BigInt for the integer.
 */

export interface Decimal {
  readonly unscaled: bigint;
  readonly scale: number;
}

/** DynamoDB's bounds: beyond them it refuses the number, which no call the simulator makes comes near. */
const MAX_PRECISION = 38;

const DECIMAL_TEXT = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** As Java's `new BigDecimal(text)` reads it: "1.50" has scale 2, "1e2" scale -2. */
export const parseDecimal = (text: string): Decimal => {
  const match = DECIMAL_TEXT.exec(text);
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = match ?? [];
  if (!match || whole.length + fraction.length === 0) throw new Unsupported(`the number '${text}'`);
  const unscaled = BigInt(`${sign === '-' ? '-' : ''}${whole}${fraction}` || '0');
  const decimal = { unscaled, scale: fraction.length - Number(exponent) };
  if (precisionOf(decimal) > MAX_PRECISION) throw new Unsupported(`the number '${text}', of more than ${MAX_PRECISION} digits`);
  return decimal;
};

const abs = (value: bigint) => (value < 0n ? -value : value);

const precisionOf = ({ unscaled }: Decimal): number => (unscaled === 0n ? 1 : abs(unscaled).toString().length);

/** The same value at a larger scale, so that two values can be added or compared digit for digit. */
const atScale = ({ unscaled, scale }: Decimal, target: number): bigint => unscaled * 10n ** BigInt(target - scale);

export const compareDecimals = (a: Decimal, b: Decimal): number => {
  const scale = Math.max(a.scale, b.scale);
  const [x, y] = [atScale(a, scale), atScale(b, scale)];
  return x < y ? -1 : x > y ? 1 : 0;
};

/** BigDecimal's add: exact, at the larger of the two scales. */
export const addDecimals = (a: Decimal, b: Decimal): Decimal => {
  const scale = Math.max(a.scale, b.scale);
  const sum = { unscaled: atScale(a, scale) + atScale(b, scale), scale };
  if (precisionOf(sum) > MAX_PRECISION) throw new Unsupported('a sum of more than 38 digits');
  return sum;
};

export const negateDecimal = ({ unscaled, scale }: Decimal): Decimal => ({ unscaled: -unscaled, scale });

/** BigDecimal's stripTrailingZeros: zero becomes 0 at scale 0. */
const strippedOfTrailingZeros = ({ unscaled, scale }: Decimal): Decimal => {
  if (unscaled === 0n) return { unscaled: 0n, scale: 0 };
  let [digits, at] = [unscaled, scale];
  while (digits % 10n === 0n) {
    digits /= 10n;
    at--;
  }
  return { unscaled: digits, scale: at };
};

/** BigDecimal's toPlainString: no exponent, the scale's digits after the point. */
export const plainText = ({ unscaled, scale }: Decimal): string => {
  if (scale <= 0) return unscaled === 0n ? '0' : `${unscaled}${'0'.repeat(-scale)}`;
  const digits = abs(unscaled).toString().padStart(scale + 1, '0');
  return `${unscaled < 0n ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
};

/** How DynamoDB Local writes a number an item is put with: "1.50" as "1.5", "1e2" as "100", "-0" as "0". */
export const canonicalNumber = (text: string): string => plainText(strippedOfTrailingZeros(parseDecimal(text)));

/**
 * The bytes DynamoDB Local counts for a number (LocalDBUtils.encodeBigDecimal's length): a byte for
 * the exponent, one per two significant digits, aligned on the exponent's parity, and a terminator
 * for a negative number of fewer than 40 digits.
 */
export const numberSizeBytes = (text: string): number => {
  const decimal = parseDecimal(text);
  if (decimal.unscaled === 0n) return 1;
  const stripped = strippedOfTrailingZeros({ unscaled: abs(decimal.unscaled), scale: decimal.scale });
  const digits = precisionOf(stripped);
  const oddExponent = (digits - stripped.scale) % 2 !== 0 ? 1 : 0;
  const pairs = Math.floor((digits + oddExponent + 1) / 2);
  return decimal.unscaled < 0n && pairs < 20 ? pairs + 2 : pairs + 1;
};
