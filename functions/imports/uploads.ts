import { fromEnv } from '@aws-sdk/credential-provider-env';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';

/*
 * Where an import's file is sent (docs/api.md, "Imports"): a URL that takes one PUT of it until it
 * expires. On AWS, a URL of the stack's bucket of feeds, presigned with the function's own
 * credentials; locally, one that `npm start` serves (local/uploads.ts). Either way the PUT carries
 * `If-None-Match: *`, so that an import's file, once it has arrived, is never replaced.
 */

/** How to send the file: `headers` are part of what the URL allows, and must be sent as they are. */
export interface Upload {
  readonly url: string;
  readonly method: 'PUT';
  readonly headers: Readonly<Record<string, string>>;
  readonly expiresAt: string;
}

/** The upload of the import's file, from `now`. */
export type UploadTarget = (importid: string, now: number) => Promise<Upload>;

/** How long an upload's URL takes the file. */
export const UPLOAD_SECONDS = 15 * 60;

/** Sent with the file: the PUT stores it only if the import has none. */
export const UPLOAD_HEADERS: Readonly<Record<string, string>> = { 'If-None-Match': '*' };

const FILE_KEY_PREFIX = 'imports/';

/** The file's key in the bucket: the importid in base64url, which any importid (any Unicode) makes a key of, and which the key gives back. */
export const importFileKey = (importid: string): string => `${FILE_KEY_PREFIX}${Buffer.from(importid, 'utf8').toString('base64url')}`;

/** The importid whose file the key is; none for a key that is no import's file. */
export const importidOfFileKey = (key: string): string | undefined => {
  if (!key.startsWith(FILE_KEY_PREFIX) || !/^[A-Za-z0-9_-]+$/.test(key.slice(FILE_KEY_PREFIX.length))) return undefined;
  const importid = Buffer.from(key.slice(FILE_KEY_PREFIX.length), 'base64url').toString('utf8');
  return importFileKey(importid) === key ? importid : undefined;
};

/** RFC 3986's escaping, as SigV4 signs a query. */
const escaped = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * Presigned PUTs to `bucket` in `region`. The payload is left unsigned, as S3's presigned URLs leave
 * it; `If-None-Match` stays a header, signed, rather than a query parameter, which S3 would not heed.
 */
export const s3Uploads = (bucket: string, region: string): UploadTarget => {
  const signer = new SignatureV4({ service: 's3', region, credentials: fromEnv(), sha256: Hash.bind(null, 'sha256'), uriEscapePath: false, applyChecksum: false });
  const hostname = `${bucket}.s3.${region}.amazonaws.com`;
  return async (importid, now) => {
    const path = `/${importFileKey(importid)}`;
    const signed = await signer.presign(
      { method: 'PUT', protocol: 'https:', hostname, path, query: {}, headers: { host: hostname, 'if-none-match': '*', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } },
      { expiresIn: UPLOAD_SECONDS, signingDate: new Date(now), unhoistableHeaders: new Set(['if-none-match']) },
    );
    const query = Object.entries(signed.query ?? {}).map(([name, value]) => `${escaped(name)}=${escaped(String(value))}`);
    return { url: `https://${hostname}${path}?${query.join('&')}`, method: 'PUT', headers: UPLOAD_HEADERS, expiresAt: new Date(now + UPLOAD_SECONDS * 1000).toISOString() };
  };
};
