/**
 * `GET /docs` on the local server: the API reference, Swagger UI rendering the document that
 * `GET /openapi.json` answers. Local only: not a route key, so never deployed.
 *
 * Nothing leaves the machine. Swagger UI's files are swagger-ui-dist's, from node_modules, served
 * here under /docs/; its validator badge, which sends the document to validator.swagger.io, is
 * off; and the page's Content-Security-Policy lets it load from, and send to, this server only.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { type AllocationsRouteKey, splitRouteKey } from '../functions/http/route-keys';

const DOCUMENT_ROUTE_KEY: AllocationsRouteKey = 'GET /openapi.json';

/** A page, or a file of one, that the local server answers itself. */
export interface LocalPage {
  /** 200 when absent. */
  readonly status?: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: () => Promise<string | Buffer>;
}

/** Same-origin only, for everything the page loads or sends; swagger-ui.css draws its icons from data: URLs. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const swaggerUiDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

const fromSwaggerUi = (file: string, contentType: string): LocalPage => ({
  headers: { 'Content-Type': contentType, 'Cache-Control': 'no-cache' },
  body: () => readFile(join(swaggerUiDir, file)),
});

const page = (contentType: string, text: string, headers: Record<string, string> = {}): LocalPage => ({
  headers: { 'Content-Type': contentType, 'Cache-Control': 'no-cache', ...headers },
  body: async () => text,
});

const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Allocation service: API reference</title>
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
<link rel="stylesheet" href="/docs/swagger-ui.css">
<link rel="stylesheet" href="/docs/index.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/reference.js"></script>
</body>
</html>
`;

/** In a file of its own, not inline: the policy runs no inline script. */
const script = (documentPath: string) => `window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(documentPath)},
  dom_id: '#swagger-ui',
  deepLinking: true,
  displayOperationId: true,
  // Its default sends the document to validator.swagger.io for a badge.
  validatorUrl: null,
});
`;

/**
 * The reference's pages by path, for a server whose functions serve the document among
 * `routeKeys`; none for one whose functions do not.
 */
export const apiReferencePages = (routeKeys: readonly string[]): ReadonlyMap<string, LocalPage> => {
  if (!routeKeys.includes(DOCUMENT_ROUTE_KEY)) return new Map();
  return new Map([
    // The server's root, which a browser opens first: the reference.
    ['/', { status: 302, headers: { Location: '/docs', 'Content-Type': 'text/plain; charset=utf-8' }, body: async () => 'The API reference is at /docs\n' }],
    ['/docs', page('text/html; charset=utf-8', html, { 'Content-Security-Policy': CONTENT_SECURITY_POLICY })],
    ['/docs/reference.js', page('text/javascript; charset=utf-8', script(splitRouteKey(DOCUMENT_ROUTE_KEY).path))],
    ['/docs/swagger-ui-bundle.js', fromSwaggerUi('swagger-ui-bundle.js', 'text/javascript; charset=utf-8')],
    ['/docs/swagger-ui.css', fromSwaggerUi('swagger-ui.css', 'text/css; charset=utf-8')],
    ['/docs/index.css', fromSwaggerUi('index.css', 'text/css; charset=utf-8')],
    ['/docs/favicon-32x32.png', fromSwaggerUi('favicon-32x32.png', 'image/png')],
  ]);
};
