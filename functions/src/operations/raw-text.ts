/**
 * The raw data of a document as a person reads it: the first bytes as
 * text, how many there are in all, and whether they are UTF-8. Pure: the
 * bytes in, a plain JSON value out (the console escapes it as text; nothing
 * here is markup).
 */
import type { RawDataView } from './types';

/** Bytes of the raw data shown as text; the rest is in the download (GET /api/documents/ID/raw, `inbox show ID --raw FILE`). */
export const RAW_TEXT_BYTES = 64 * 1024;

const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const lenient = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

/** Whether a byte continues a UTF-8 sequence (10xxxxxx). */
const continues = (byte: number | undefined): boolean => byte !== undefined && (byte & 0xc0) === 0x80;

/**
 * Where to cut `bytes` at most `limit` bytes in without splitting a UTF-8
 * character: back over up to three continuation bytes, so a clipped text
 * ends on a whole character (bytes that are not UTF-8 lose at most three).
 */
export function textEnd(bytes: Uint8Array, limit: number): number {
  if (bytes.length <= limit) return bytes.length;
  let end = limit;
  while (end > limit - 3 && end > 0 && continues(bytes[end])) end -= 1;
  return continues(bytes[end]) ? limit : end;
}

function isUtf8(bytes: Uint8Array): boolean {
  try {
    strict.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * The view of raw data: `head` holds its first bytes (at least
 * `limit` of them when there are that many), `total` how many were kept in
 * all (rawDataBytes). The text is UTF-8 with U+FFFD for every byte that is
 * not; `utf8` says whether any was replaced.
 */
export function rawTextOf(head: Uint8Array, total: number, form: string | null, limit = RAW_TEXT_BYTES): RawDataView {
  const end = textEnd(head, limit);
  const shown = head.subarray(0, end);
  return {
    bytes: Math.max(total, head.length),
    form,
    text: lenient.decode(shown),
    shownBytes: end,
    utf8: isUtf8(shown),
  };
}
