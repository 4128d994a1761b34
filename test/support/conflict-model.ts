import { inject } from 'vitest';
import { type ConflictModel, type ConflictModelOptions, startConflictModel } from '../../local/conflict-model';
import { type TestTable, createTestTable } from './dynamodb';

export interface ModelledTable extends TestTable {
  /** The conflict model every call of this table's clients goes through. */
  readonly model: ConflictModel;
}

/**
 * A fresh table in the run's DynamoDB Local, whose clients and repositories reach it through a
 * conflict model of its own (local/conflict-model.ts): transactions that meet on an item are
 * cancelled and partitions are throttled as on AWS, with the settings a test chooses.
 */
export const createModelledTable = async (options: Omit<ConflictModelOptions, 'target'> = {}): Promise<ModelledTable> => {
  const model = await startConflictModel({ target: inject('dynamoDbEndpoint'), ...options });
  // The model stands for AWS: its clients keep AWS's 2 s an attempt (a call past it is sent again
  // with its token, as the model's suites expect), whatever the run gives DynamoDB Local
  // (vitest.config.ts). Read when the client is made, at the start of createTestTable.
  const runTimeout = process.env.DYNAMODB_REQUEST_TIMEOUT_MS;
  delete process.env.DYNAMODB_REQUEST_TIMEOUT_MS;
  const creating = createTestTable(model.endpoint);
  if (runTimeout !== undefined) process.env.DYNAMODB_REQUEST_TIMEOUT_MS = runTimeout;
  const table = await creating;
  return {
    ...table,
    model,
    drop: async () => {
      await table.drop();
      await model.stop();
    },
  };
};
