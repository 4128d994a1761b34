/**
 * Child process of the bench: the local server (local/server.ts) over the production bundles of
 * the handlers, the files Lambda would run, against the DynamoDB at DYNAMODB_ENDPOINT. Sends its
 * port over IPC once it listens; stops on SIGTERM.
 */
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { routeKeys } from '../../functions/http/route-keys';
import { type LambdaHttpHandler, createLocalServer } from '../../local/server';

const [allocationsBundle, batchesBundle] = process.argv.slice(2);
if (!allocationsBundle || !batchesBundle) throw new Error('Usage: serve-bundles.ts <allocations.mjs> <batches.mjs>');

const handlerOf = async (bundle: string): Promise<LambdaHttpHandler> => {
  const module = (await import(pathToFileURL(bundle).href)) as { handler: LambdaHttpHandler };
  return module.handler;
};

const server = createLocalServer({
  allocations: { handler: await handlerOf(allocationsBundle), routeKeys: routeKeys.allocations },
  batches: { handler: await handlerOf(batchesBundle), routeKeys: routeKeys.batches },
});
server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));
