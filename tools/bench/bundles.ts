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
  readonly handlers: readonly Bundle[];
  readonly clientAlone: Bundle;
}

const HANDLER_ENTRIES = { allocations: 'functions/allocations.ts', batches: 'functions/batches.ts' };
const CLIENT_ALONE_ENTRY = 'tools/bench/client-alone.ts';

/** Builds both handlers and the client-alone floor with exactly the settings the stack deploys with. */
export const buildBundles = async (outdir: string): Promise<Bundles> => {
  await rm(outdir, { recursive: true, force: true });
  await build({
    ...productionBuildOptions,
    entryPoints: { ...HANDLER_ENTRIES, 'client-alone': CLIENT_ALONE_ENTRY },
    outdir,
    logLevel: 'warning',
  });
  const bundleOf = async (name: string): Promise<Bundle> => {
    const file = join(outdir, `${name}${productionBuildOptions.outExtension['.js']}`);
    return { name, file, bytes: (await stat(file)).size };
  };
  return {
    handlers: await Promise.all(Object.keys(HANDLER_ENTRIES).map(bundleOf)),
    clientAlone: await bundleOf('client-alone'),
  };
};
