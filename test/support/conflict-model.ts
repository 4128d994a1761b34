import { type ConflictModel, type ConflictModelOptions, startConflictModel } from '../../local/conflict-model';
import { createTestTable, dynamoDbEndpoint, type TestTable } from './dynamodb';

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
  const model = await startConflictModel({ target: dynamoDbEndpoint(), ...options });
  const table = await createTestTable(model.endpoint);
  return {
    ...table,
    model,
    drop: async () => {
      await table.drop();
      await model.stop();
    },
  };
};
