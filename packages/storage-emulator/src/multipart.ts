import { ApiFailure, fail } from './api-error';

/** The two parts of a `uploadType=multipart` upload: the object resource (JSON) and its bytes. */
export interface MultipartUpload {
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly contentType: string | undefined;
  readonly data: Buffer;
}

const CRLF = Buffer.from('\r\n');

/**
 * Parses a `multipart/related` body (RFC 2387) as the JSON API takes it:
 * first part the object resource as JSON, second part the media. The client
 * (teeny-request) writes `--B\r\nContent-Type: T\r\n\r\n<body>\r\n` per part
 * and `--B--` at the end; any well-formed multipart with CRLF line ends works.
 */
export function parseMultipart(contentType: string | undefined, body: Buffer): MultipartUpload {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  const b = boundary?.[1] ?? boundary?.[2];
  if (!/^multipart\/related/i.test(contentType ?? '') || b === undefined) {
    throw fail.invalid('Multipart uploads need Content-Type multipart/related with a boundary.');
  }
  const delimiter = Buffer.from(`--${b}`);
  const parts: Buffer[] = [];
  let at = body.indexOf(delimiter);
  if (at < 0) throw fail.invalid('Multipart body has no boundary delimiter.');
  for (;;) {
    at += delimiter.length;
    if (body.subarray(at, at + 2).toString() === '--') break;
    if (!body.subarray(at, at + 2).equals(CRLF)) throw fail.invalid('Multipart delimiter not followed by CRLF.');
    at += 2;
    const next = body.indexOf(Buffer.concat([CRLF, delimiter]), at);
    if (next < 0) throw fail.invalid('Multipart body ends without a closing delimiter.');
    parts.push(body.subarray(at, next));
    at = next + CRLF.length;
  }
  if (parts.length !== 2)
    throw fail.invalid(`Multipart upload must have 2 parts (metadata, media), got ${parts.length}.`);
  const [meta, media] = parts.map(splitPart) as [Part, Part];
  let metadata: unknown;
  try {
    metadata = JSON.parse(meta.body.toString('utf8'));
  } catch {
    throw fail.invalid('Multipart metadata part is not valid JSON.');
  }
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))
    throw fail.invalid('Multipart metadata part must be a JSON object.');
  return { metadata: metadata as Record<string, unknown>, contentType: media.contentType, data: media.body };
}

interface Part {
  readonly contentType: string | undefined;
  readonly body: Buffer;
}

function splitPart(part: Buffer): Part {
  const end = part.indexOf('\r\n\r\n');
  if (end < 0) throw new ApiFailure(400, 'invalid', 'Multipart part without a header block.');
  const headers = part.subarray(0, end).toString('latin1').split('\r\n');
  const type = headers.map((h) => /^content-type:\s*(.+)$/i.exec(h)?.[1]).find((t) => t !== undefined);
  return { contentType: type?.trim(), body: part.subarray(end + 4) };
}
