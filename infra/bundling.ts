import { type BundlingOptions, OutputFormat, SourceMapMode } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';

/*
 * How a handler is bundled for Lambda, defined once: the stack's NodejsFunction builds with
 * `productionBundling`, and `npm run bench` builds with `productionBuildOptions`, the same settings
 * in esbuild's own terms, so the sizes and cold starts the bench reports are those of what deploys.
 * No `require` banner: with the `module` entry points below every dependency loads as ESM, and
 * the bench imports and runs each bundle, so a CommonJS `require` that slipped in would show there.
 */

/** The Lambda runtime is Node.js 22: no syntax is lowered for older engines. */
const TARGET = 'node22';

/** The SDK's ESM builds: its CommonJS ones fail in an ESM bundle ("Dynamic require of node:https"). */
const MAIN_FIELDS = ['module', 'main'];

/**
 * Modules swapped for smaller ones at bundling, by esbuild's alias. The SDK clients' Node runtime
 * config imports the whole default credential chain statically, and with it the STS, SSO and
 * sign-in clients (`@aws-sdk/nested-clients`), the INI, process, web identity, container and
 * instance metadata providers, the query protocol and XML: 132 KB of each bundle, which no Lambda
 * invocation runs, as Lambda puts the role's credentials in the environment. ./lambda-credentials
 * reads them from there alone. The path is relative to the directory esbuild runs in: the
 * repository root, for CDK (its `projectRoot`, locally or in Docker) as for `npm run` scripts.
 */
const ALIASES: Readonly<Record<string, string>> = {
  '@aws-sdk/credential-provider-node': './infra/lambda-credentials.ts',
  // The event-stream codec, which the SDK's HTTP protocol imports for operations that stream: DynamoDB has none (./no-event-streams).
  '@smithy/core/event-streams': './infra/no-event-streams.ts',
  // Endpoint discovery's settings without its endpoint cache, which no DynamoDB command reads (./no-endpoint-cache).
  '@aws-sdk/middleware-endpoint-discovery': './infra/no-endpoint-cache.ts',
};

/**
 * The SDK is bundled, not taken from the runtime: a tree-shaken bundle loads faster than the
 * runtime's full copy, and pins the version the tests ran against.
 */
const EXTERNAL_MODULES: string[] = [];

/**
 * For esbuild's `build()`: entry points and an output directory are the caller's. ESM lets esbuild
 * tree-shake the SDK, middy and zod; minified code is less to read and parse at cold start.
 */
export const productionBuildOptions = {
  bundle: true,
  platform: 'node',
  target: TARGET,
  format: 'esm',
  mainFields: MAIN_FIELDS,
  external: EXTERNAL_MODULES,
  alias: ALIASES,
  treeShaking: true,
  minify: true,
  // A separate .map file, named at the end of the bundle: stack traces point at the TypeScript
  // (with --enable-source-maps), and the bundle carries no map bytes to load.
  sourcemap: 'linked',
  // The map needs names and lines for a stack trace, not the sources' text: a third the size, so
  // a cold start with --enable-source-maps has less of it to parse.
  sourcesContent: false,
  outExtension: { '.js': '.mjs' },
} as const satisfies BuildOptions;

/**
 * For CDK's NodejsFunction `bundling`: the same settings under CDK's names. CDK always bundles for
 * platform node and, for ESM, writes `index.mjs`.
 */
export const productionBundling: BundlingOptions = {
  target: TARGET,
  format: OutputFormat.ESM,
  mainFields: MAIN_FIELDS,
  bundleAwsSDK: true,
  externalModules: EXTERNAL_MODULES,
  esbuildArgs: {
    '--tree-shaking': 'true',
    // `--alias:<module>=<path>` each, as `alias` above.
    '--alias': Object.entries(ALIASES).map(([module, path]) => `${module}=${path}`),
  },
  minify: true,
  sourceMap: true,
  // `--sourcemap` with no mode: esbuild's linked map, as `sourcemap: 'linked'` above.
  sourceMapMode: SourceMapMode.DEFAULT,
  sourcesContent: false,
};
