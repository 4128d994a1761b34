/**
 * Child process of the bench: the local server (local/server.ts) over the production bundles of
 * the handlers, the files Lambda would run, against the DynamoDB at DYNAMODB_ENDPOINT. Sends its
 * port over IPC once it listens; stops on SIGTERM.
 */
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { type LambdaHttpHandler, createLocalServer } from '../../local/server';

const [allocateBundle, addBatchBundle] = process.argv.slice(2);
if (!allocateBundle || !addBatchBundle) throw new Error('Usage: serve-bundles.ts <allocate.mjs> <add-batch.mjs>');

const handlerOf = async (bundle: string): Promise<LambdaHttpHandler> => {
  const module = (await import(pathToFileURL(bundle).href)) as { handler: LambdaHttpHandler };
  return module.handler;
};

const server = createLocalServer({
  'POST /allocate': await handlerOf(allocateBundle),
  'POST /add_batch': await handlerOf(addBatchBundle),
});
server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));
