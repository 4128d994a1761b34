import { randomUUID } from 'node:crypto';
import type { ConsumedCapacity } from '@aws-sdk/client-dynamodb';
import type { BatchRepository } from '../../domain/ports';
import { addBatch, allocate } from '../../domain/services';
import type { DocumentSender } from '../../functions/store/store-calls';

/** One call to DynamoDB, by its API name (`Query`, `TransactWriteItems`), and the capacity it consumed. */
export interface StoreCall {
  readonly operation: string;
  /** Undefined when DynamoDB answered with an error, which reports no capacity. */
  readonly capacityUnits: number | undefined;
}

export interface RequestCostMeter {
  /** Hand this to the repository in place of the document client. */
  readonly sender: DocumentSender;
  /** The calls since the last `takeCalls()`, which starts the next count. */
  takeCalls(): StoreCall[];
}

interface DocumentCommand {
  input: { ReturnConsumedCapacity?: string };
  /** The lib-dynamodb command wraps the client's command, which carries the API's name. */
  clientCommand?: object;
}

/**
 * Wraps a document client to record every call the repository makes through it, asking DynamoDB
 * for the capacity each consumed (ReturnConsumedCapacity) so the count and the cost come together.
 */
export const meterRequestCost = (client: DocumentSender): RequestCostMeter => {
  let calls: StoreCall[] = [];
  const send = async (command: DocumentCommand, options?: object) => {
    command.input.ReturnConsumedCapacity = 'TOTAL';
    const operation = operationName(command);
    try {
      const output = (await client.send(command as never, options)) as { ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[] };
      calls.push({ operation, capacityUnits: totalCapacityUnits(output.ConsumedCapacity) });
      return output;
    } catch (error) {
      calls.push({ operation, capacityUnits: undefined });
      throw error;
    }
  };
  return {
    sender: { send: send as unknown as DocumentSender['send'] },
    takeCalls: () => {
      const taken = calls;
      calls = [];
      return taken;
    },
  };
};

const operationName = (command: DocumentCommand): string =>
  (command.clientCommand ?? command).constructor.name.replace(/Command$/, '');

/** The units the calls of these operations consumed, in all: reads (`Query`, `GetItem`...) or writes. */
export const unitsOf = (calls: readonly StoreCall[], operations: readonly string[]): number =>
  calls.filter(({ operation }) => operations.includes(operation)).reduce((sum, { capacityUnits = 0 }) => sum + capacityUnits, 0);

/** A transaction reports one entry per table it touched; a single-table call, one entry. */
const totalCapacityUnits = (consumed: ConsumedCapacity | ConsumedCapacity[] | undefined): number =>
  [consumed ?? []].flat().reduce((sum, { CapacityUnits = 0 }) => sum + CapacityUnits, 0);

/**
 * A SKU as years of trade leave it: `exhaustedBatches` batches whose stock all went to orders, and
 * one batch with stock. Answers the SKU's name.
 */
export const skuWithHistory = async (repository: BatchRepository, exhaustedBatches: number): Promise<string> => {
  const sku = `sku-${randomUUID()}`;
  for (let index = 0; index < exhaustedBatches; index++) {
    await addBatch({ ref: `${sku}-${index}`, sku, qty: 1, eta: null }, repository);
    await allocate({ orderid: `order-${randomUUID()}`, sku, qty: 1 }, repository);
  }
  await addBatch({ ref: `${sku}-current`, sku, qty: 1_000, eta: null }, repository);
  return sku;
};
