import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import { productionBuildOptions } from '../../infra/bundling';

export interface Bundle {
  readonly name: string;
  readonly file: string;
  readonly bytes: number;
}

export interface Bundles {
  /** The HTTP handlers: allocations, then batches. */
  readonly handlers: readonly Bundle[];
  /** The stream consumer (functions/publish-events.ts). */
  readonly consumer: Bundle;
  /** The hold sweeper (functions/sweep-holds.ts), which a schedule runs: no HTTP, but the DynamoDB client as the handlers have it. */
  readonly sweeper: Bundle;
  /** The import worker (functions/import-worker.ts), which the state machine of imports runs: the same. */
  readonly importWorker: Bundle;
  /** The floor: the DynamoDB client alone, as the SDK ships it. */
  readonly clientAlone: Bundle;
  /** The same client with every setting of the handlers' bundles, the credential alias included. */
  readonly clientAloneAliased: Bundle;
}

const HANDLER_ENTRIES = { allocations: 'functions/allocations.ts', batches: 'functions/batches.ts' };
const CONSUMER = 'publish-events';
export const SWEEPER = 'sweep-holds';
export const IMPORT_WORKER = 'import-worker';
const CLIENT_ALONE_ENTRY = 'tools/bench/client-alone.ts';
export const CLIENT_ALONE = 'client-alone';
export const CLIENT_ALONE_ALIASED = 'client-alone-aliased';

/**
 * The floor's settings: the deployed ones without their aliases. The init limit is against
 * the client's own init as the SDK ships it; with the alias, which leaves its default credential
 * chain out, the floor would drop by what the handlers save with the same alias, and the limit
 * would measure the handlers against a client no SDK user gets.
 */
const stockBuildOptions = { ...productionBuildOptions, alias: {} };

/**
 * Builds the handlers, the consumer, the sweeper, the import worker and the client alone with the alias with exactly the settings
 * the stack deploys with, and the floor with the same settings save the alias.
 */
export const buildBundles = async (outdir: string): Promise<Bundles> => {
  await rm(outdir, { recursive: true, force: true });
  const common = { outdir, logLevel: 'warning' } as const;
  await Promise.all([
    build({
      ...productionBuildOptions,
      ...common,
      entryPoints: {
        ...HANDLER_ENTRIES,
        [CONSUMER]: 'functions/publish-events.ts',
        [SWEEPER]: 'functions/sweep-holds.ts',
        [IMPORT_WORKER]: 'functions/import-worker.ts',
        [CLIENT_ALONE_ALIASED]: CLIENT_ALONE_ENTRY,
      },
    }),
    build({ ...stockBuildOptions, ...common, entryPoints: { [CLIENT_ALONE]: CLIENT_ALONE_ENTRY } }),
  ]);
  const bundleOf = async (name: string): Promise<Bundle> => {
    const file = join(outdir, `${name}${productionBuildOptions.outExtension['.js']}`);
    return { name, file, bytes: (await stat(file)).size };
  };
  return {
    handlers: await Promise.all(Object.keys(HANDLER_ENTRIES).map(bundleOf)),
    consumer: await bundleOf(CONSUMER),
    sweeper: await bundleOf(SWEEPER),
    importWorker: await bundleOf(IMPORT_WORKER),
    clientAlone: await bundleOf(CLIENT_ALONE),
    clientAloneAliased: await bundleOf(CLIENT_ALONE_ALIASED),
  };
};
