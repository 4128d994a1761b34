import { request } from 'node:http';

export interface RawAnswer {
  readonly status: number;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
}

export interface RawRequest {
  readonly method?: string;
  /** Sent as written: fetch would resolve `/x/../allocate` and `/./allocate` before sending. */
  readonly path: string;
  /** Name, value, name, value...: a name given twice is sent as two header lines, which fetch never does. */
  readonly headers?: readonly string[];
  readonly body?: string | Uint8Array;
}

/** One HTTP/1.1 request to `baseUrl`, on a connection of its own, exactly as given. */
export const sendRaw = (baseUrl: string, { method = 'POST', path, headers = [], body }: RawRequest): Promise<RawAnswer> => {
  const { hostname, port, host } = new URL(baseUrl);
  const bytes = body === undefined ? Buffer.alloc(0) : Buffer.from(body);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { hostname, port, method, path, agent: false, headers: ['Host', host, ...headers, 'Content-Length', String(bytes.length)] },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () =>
          resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
        incoming.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(bytes);
  });
};
