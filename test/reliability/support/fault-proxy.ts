import { type IncomingMessage, type Server, type ServerResponse, Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The failures DynamoDB Local never produces, made on the wire so the service's real client meets
 * them as it would meet DynamoDB's: its deserializer, its retries and its timeouts all take part.
 */
export type Fault =
  /** Never answers: a store slower than any timeout. */
  | { readonly kind: 'hang' }
  /** The error DynamoDB sends when a partition is over its throughput. */
  | { readonly kind: 'throttle' }
  /** A TransactionCanceledException with one reason per item of the transaction, e.g. TransactionConflict. */
  | { readonly kind: 'cancel'; readonly reasons: readonly string[] }
  /** The store applies the request, then the connection drops before its answer arrives. */
  | { readonly kind: 'lose-answer' }
  /** The connection drops before the request reaches the store: a store that is down. */
  | { readonly kind: 'unreachable' };

export interface FaultRule {
  readonly fault: Fault;
  /** The DynamoDB operation it applies to, e.g. `TransactWriteItems`; every operation when absent. */
  readonly operation?: string;
  /** How many matching requests it affects before it lapses; all of them when absent. */
  readonly times?: number;
}

export interface FaultProxy {
  /** Where the service's client should point instead of DynamoDB Local. */
  readonly endpoint: string;
  inject(rule: FaultRule): void;
  /** Lets every request through again. */
  heal(): void;
  /** Requests seen so far for the operation, e.g. `Query`, faulty or not. */
  requestCount(operation: string): number;
  /** Requests passed on to the store whose answers have not come back yet. */
  inFlight(): number;
  close(): Promise<void>;
}

const JSON_PROTOCOL = 'application/x-amz-json-1.0';
const ERROR_TYPE_PREFIX = 'com.amazonaws.dynamodb.v20120810#';

/** A loopback HTTP proxy in front of a DynamoDB endpoint that injects faults on request. */
export const startFaultProxy = async (upstreamEndpoint: string): Promise<FaultProxy> => {
  const upstream = new URL(upstreamEndpoint);
  const agent = new Agent({ keepAlive: true });
  const rules: Array<{ rule: FaultRule; remaining: number }> = [];
  const seen: string[] = [];
  let forwarding = 0;

  const takeFault = (operation: string): Fault | undefined => {
    const match = rules.find(({ rule, remaining }) => remaining > 0 && (rule.operation ?? operation) === operation);
    if (!match) return undefined;
    match.remaining -= 1;
    return match.rule.fault;
  };

  const forward = (incoming: IncomingMessage, body: Buffer): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> => {
    forwarding++;
    return new Promise<{ status: number; headers: Record<string, string>; body: Buffer }>((resolve, reject) => {
      const outgoing = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: incoming.method,
          path: incoming.url,
          headers: { ...incoming.headers, host: upstream.host },
          agent,
        },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => chunks.push(chunk));
          answer.on('end', () => {
            const headers: Record<string, string> = {};
            for (const [name, value] of Object.entries(answer.headers)) {
              if (typeof value === 'string') headers[name] = value;
            }
            resolve({ status: answer.statusCode ?? 502, headers, body: Buffer.concat(chunks) });
          });
          answer.on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    }).finally(() => forwarding--);
  };

  const sendError = (response: ServerResponse, type: string, extra: Record<string, unknown> = {}) => {
    const payload = JSON.stringify({ __type: `${ERROR_TYPE_PREFIX}${type}`, message: `${type} injected by the test`, ...extra });
    response.writeHead(400, { 'Content-Type': JSON_PROTOCOL, 'Content-Length': Buffer.byteLength(payload) });
    response.end(payload);
  };

  const handle = async (incoming: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const operation = String(incoming.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
    seen.push(operation);

    const fault = takeFault(operation);
    switch (fault?.kind) {
      case 'hang':
        return;
      case 'unreachable':
        response.socket?.destroy();
        return;
      case 'throttle':
        return sendError(response, 'ProvisionedThroughputExceededException');
      case 'cancel':
        return sendError(response, 'TransactionCanceledException', {
          CancellationReasons: fault.reasons.map((Code) =>
            Code === 'None' ? { Code } : { Code, Message: `${Code} injected by the test` },
          ),
        });
      case 'lose-answer':
        await forward(incoming, body);
        response.socket?.destroy();
        return;
      case undefined: {
        const answer = await forward(incoming, body);
        response.writeHead(answer.status, answer.headers);
        response.end(answer.body);
      }
    }
  };

  const server: Server = createServer((incoming, response) => {
    handle(incoming, response).catch(() => response.socket?.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    inject: (rule) => rules.push({ rule, remaining: rule.times ?? Number.POSITIVE_INFINITY }),
    heal: () => rules.splice(0),
    requestCount: (operation) => seen.filter((name) => name === operation).length,
    inFlight: () => forwarding,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
};
