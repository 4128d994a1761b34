import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { type OpenApiDocumentReader, openApiDocumentFile } from '../../functions/http/openapi-document';
import { splitRouteKey } from '../../functions/http/route-keys';
import { OPENAPI_FILE } from '../../tools/openapi';
import { type DocumentValidators, documentValidators } from '../../tools/openapi/validation';

/** docs/openapi.json, for an allocations handler run from source, which has no copy beside it as the bundle has. */
export const committedOpenApiDocument: OpenApiDocumentReader = openApiDocumentFile(pathToFileURL(OPENAPI_FILE));

/** An answer as a client receives it: the body as text, header names in any case. */
export interface ReceivedResponse {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly body?: string;
}

interface DocumentedResponse {
  readonly headers?: Record<string, { readonly required?: boolean; readonly schema: { readonly type?: string } }>;
  readonly content?: Record<string, unknown>;
}

/** The committed document, the one clients read; read once, at the first check. */
let committed: { readonly document: { paths: Record<string, Record<string, { responses: Record<string, DocumentedResponse> }>> }; readonly validators: DocumentValidators } | undefined;

const loadCommitted = () => {
  if (!committed) {
    const document = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'));
    committed = { document, validators: documentValidators(document) };
  }
  return committed;
};

/** A header's text as its schema types it (OpenAPI's `simple` style): `Retry-After: 1` is the integer 1. */
const headerValue = (text: string, type: string | undefined): unknown =>
  (type === 'integer' || type === 'number') && text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : text;

/**
 * What is wrong with `response` as an answer of `routeKey` (`POST /allocate`), by docs/openapi.json:
 * a status it does not document, a documented header missing or malformed, a body where none is
 * documented (a 204) or of another media type, or one its schema refuses. Empty when it conforms.
 */
export const responseProblems = (routeKey: string, response: ReceivedResponse): string[] => {
  const { document, validators } = loadCommitted();
  const { method, path } = splitRouteKey(routeKey);
  const at = ['paths', path, method.toLowerCase(), 'responses', String(response.status)];
  const documented = document.paths[path]?.[method.toLowerCase()]?.responses[String(response.status)];
  if (!documented) return [`${routeKey} does not document the status ${response.status}`];

  const problems: string[] = [];
  const headers = new Map(Object.entries(response.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value === undefined ? undefined : String(value)]));
  for (const [name, header] of Object.entries(documented.headers ?? {})) {
    const text = headers.get(name.toLowerCase());
    if (text === undefined) {
      if (header.required) problems.push(`${response.status} has no ${name} header`);
      continue;
    }
    const validate = validators.schemaAt(...at, 'headers', name, 'schema');
    if (!validate) problems.push(`${name} has no schema`);
    else if (!validate(headerValue(text, header.schema.type))) problems.push(`${name}: ${validators.errorsText(validate)}`);
  }

  const contentType = headers.get('content-type');
  if (!documented.content) {
    if (contentType !== undefined || (response.body ?? '') !== '') problems.push(`${response.status} has a body or a Content-Type, and none is documented`);
    return problems;
  }
  const mediaType = (contentType ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? '';
  if (!(mediaType in documented.content)) return [...problems, `${response.status} is documented as ${Object.keys(documented.content)}, not ${contentType}`];
  let body: unknown = response.body ?? '';
  if (mediaType === 'application/json') {
    try {
      body = JSON.parse(response.body ?? '');
    } catch {
      return [...problems, `the ${response.status} body is not JSON: ${response.body}`];
    }
  }
  const validate = validators.schemaAt(...at, 'content', mediaType, 'schema');
  if (!validate) problems.push(`the ${response.status} ${mediaType} body has no schema`);
  else if (!validate(body)) problems.push(`the ${response.status} body: ${validators.errorsText(validate)}`);
  return problems;
};
