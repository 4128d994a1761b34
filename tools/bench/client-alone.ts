/**
 * The init floor: the DynamoDB document client alone, constructed as a handler constructs it at
 * module scope. The bench bundles it with the handlers' settings and compares their cold starts.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export const documentClient = DynamoDBDocumentClient.from(new DynamoDBClient({}));
