import { Agent, request } from 'node:http';

export interface LoadRun {
  readonly completed: number;
  readonly seconds: number;
  readonly latenciesMs: number[];
}

/**
 * Keeps `inFlight` operations going, each worker starting its next as soon as the last one ends,
 * for `durationMs`: a closed loop, so the rate is what the system sustains at that concurrency.
 */
export const runClosedLoop = async (operation: () => Promise<void>, inFlight: number, durationMs: number): Promise<LoadRun> => {
  const latenciesMs: number[] = [];
  const startedAt = performance.now();
  const deadline = startedAt + durationMs;
  const worker = async () => {
    while (performance.now() < deadline) {
      const operationStartedAt = performance.now();
      await operation();
      latenciesMs.push(performance.now() - operationStartedAt);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return { completed: latenciesMs.length, seconds: (performance.now() - startedAt) / 1000, latenciesMs };
};

export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
}

export interface JsonPoster {
  post(path: string, body: unknown): Promise<HttpAnswer>;
  /** A request of any method: with a JSON body when `body` is given, without one otherwise (a GET, a DELETE). */
  send(method: string, path: string, body?: unknown): Promise<HttpAnswer>;
  /** Requests answered so far. */
  answered(): number;
  close(): void;
}

/** A keep-alive HTTP client on loopback, as a load balancer in front of the API would hold its connections. */
export const jsonPoster = (port: number, maxSockets: number): JsonPoster => {
  const agent = new Agent({ keepAlive: true, maxSockets });
  let answered = 0;
  const send = (method: string, path: string, body?: unknown) =>
    new Promise<HttpAnswer>((resolve, reject) => {
      const payload = body === undefined ? '' : JSON.stringify(body);
      const outgoing = request(
        {
          host: '127.0.0.1',
          port,
          path,
          method,
          agent,
          headers: body === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) },
        },
        (incoming) => {
          const chunks: Buffer[] = [];
          incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
          incoming.on('end', () => {
            answered++;
            resolve({ status: incoming.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
          });
          incoming.on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(payload);
    });
  return { post: (path, body) => send('POST', path, body), send, answered: () => answered, close: () => agent.destroy() };
};
