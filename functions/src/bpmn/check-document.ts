/**
 * What modellers' files get wrong before BPMN starts: an encoding other than
 * UTF-8 (a model saved as Latin-1 or UTF-16 by an old tool), and a DOCTYPE
 * (whose entities an XML reader would expand). Each is refused in words a
 * modeller acts on, before the XML reader reports something obscure.
 */
import { ModelError } from './model';

/** Refuses a document that is not UTF-8 or declares a DOCTYPE. `xml` is the file as read as UTF-8. */
export function checkDocument(xml: string): void {
  const head = xml.slice(0, 512);
  if (head.includes('\u0000')) throw new ModelError('the file is not UTF-8 (it looks like UTF-16): save it as UTF-8');
  const declared = /^\uFEFF?\s*<\?xml[^>]*\bencoding\s*=\s*["']([^"']+)["']/.exec(head)?.[1];
  if (declared !== undefined && !/^utf-?8$/i.test(declared))
    throw new ModelError(`the file declares encoding ${declared}: save it as UTF-8`);
  const bad = xml.indexOf('\uFFFD');
  if (bad >= 0) {
    const line = xml.slice(0, bad).split('\n').length;
    throw new ModelError(`the file is not valid UTF-8 (line ${line}): save it as UTF-8`);
  }
  if (/<!DOCTYPE/i.test(xml))
    throw new ModelError('the file declares a DOCTYPE, which a BPMN model never needs: remove it');
}
