/**
 * Validators for the schemas of docs/openapi.json, compiled by ajv (JSON Schema 2020-12, as OpenAPI
 * 3.1 has it) with the document's two extensions registered: what the tests check requests and
 * answers against. Any schema of the document is reached by where it is in it.
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { nfcFormat, uniqueItemPropertiesKeyword } from './extensions';

/** The document's own fields, which ajv (strict about keywords) must be told are not schema keywords. */
const DOCUMENT_FIELDS = ['openapi', 'info', 'servers', 'tags', 'security', 'paths', 'components'];

/** A name for the document inside ajv, so that its `#/components/...` references resolve. */
const DOCUMENT_ID = 'urn:allocation-service:openapi';

const pointerOf = (segments: readonly string[]) => segments.map((segment) => `/${segment.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

export interface DocumentValidators {
  /** The validator of the schema at `segments` in the document, e.g. `paths`, `/allocate`, `post`, ...; undefined when none is there. */
  readonly schemaAt: (...segments: string[]) => ValidateFunction | undefined;
  readonly errorsText: (validate: ValidateFunction) => string;
}

export const documentValidators = (document: object): DocumentValidators => {
  const ajv = new Ajv2020({ allErrors: true });
  addFormats(ajv);
  ajv.addFormat(nfcFormat.name, { type: 'string', validate: nfcFormat.isMet });
  ajv.addKeyword({
    keyword: uniqueItemPropertiesKeyword.name,
    type: 'array',
    schemaType: 'array',
    validate: (properties: string[], items: unknown[]) => uniqueItemPropertiesKeyword.isMet(properties, items),
  });
  ajv.addVocabulary(DOCUMENT_FIELDS);
  ajv.addSchema(document, DOCUMENT_ID);
  const compiled = new Map<string, ValidateFunction | undefined>();
  return {
    schemaAt: (...segments) => {
      const pointer = pointerOf(segments);
      if (!compiled.has(pointer)) compiled.set(pointer, ajv.getSchema(`${DOCUMENT_ID}#${pointer}`));
      return compiled.get(pointer);
    },
    errorsText: (validate) => ajv.errorsText(validate.errors),
  };
};
