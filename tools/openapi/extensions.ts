/**
 * The two rules of the request schemas that JSON Schema has no keyword for, as docs/openapi.json
 * states them, and what each means, for tools/openapi.ts to write and for a validator to check:
 * test/unit/openapi-agreement.test.ts registers them in ajv and proves the document then accepts
 * exactly what the service's zod schemas accept. A validator that does not know them lets through
 * what the service refuses, and nothing else: an unknown `format` is only an annotation in JSON
 * Schema 2020-12, and an `x-` keyword is ignored.
 */

/**
 * NFC as a `format`, since it is a property of a string that no regular expression can state (it
 * depends on the Unicode composition tables): format is JSON Schema's place for such a rule, and
 * the one that validators let a user add a check for (ajv's `addFormat`).
 */
export const nfcFormat = {
  name: 'nfc',
  description:
    'A string in Unicode normalization form NFC: `s.normalize("NFC") === s` in JavaScript, ' +
    '`unicodedata.is_normalized("NFC", s)` in Python. Refused, not normalized, so the id stored is the id sent.',
  isMet: (value: string): boolean => value.normalize('NFC') === value,
} as const;

/**
 * "Each SKU once" as an `x-` keyword: `uniqueItems` compares whole items, and two lines with one
 * SKU and different quantities differ. Named after ajv-keywords' `uniqueItemProperties`, which
 * means the same, with the `x-` that OpenAPI reserves for extensions.
 */
export const uniqueItemPropertiesKeyword = {
  name: 'x-uniqueItemProperties',
  description:
    'An array in which no two objects that hold every property listed have equal values for all of them ' +
    '(compared as JSON values: strings code point by code point), like ajv-keywords\' `uniqueItemProperties`.',
  isMet: (properties: readonly string[], items: readonly unknown[]): boolean => {
    const seen = new Set<string>();
    for (const item of items) {
      if (typeof item !== 'object' || item === null || !properties.every((property) => Object.hasOwn(item, property))) continue;
      const key = JSON.stringify(properties.map((property) => (item as Record<string, unknown>)[property]));
      if (seen.has(key)) return false;
      seen.add(key);
    }
    return true;
  },
} as const;
