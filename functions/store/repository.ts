import { DynamoDbBatchRepository } from './batch-repository';
import { createDocumentClient } from './client';
import { tableNameFromEnv } from './table';

/** Built once per Lambda instance, at module scope, so warm invocations reuse its connections. */
export const batchRepository = new DynamoDbBatchRepository(createDocumentClient(), tableNameFromEnv());
