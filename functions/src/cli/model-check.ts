/**
 * The pure part of `inbox model check`: the verdict on one model's XML (the
 * parser's, as a deploy would load it, with the refused element's kind looked
 * up) and the lines and JSON the command prints. No I/O: the command
 * (model-check-command.ts) reads the files.
 */
import BpmnModdle from 'bpmn-moddle';
import { ModelError } from '../bpmn/model';
import { parseProcessModel } from '../bpmn/parse-model';
import { errorMessage } from '../core/errors';
import { type ModelNote, modelNotes } from '../operations/model-notes';

/** The largest file the check reads (5 MiB): a model is a few hundred KiB at most; anything larger is not read at all. */
export const MAX_MODEL_BYTES = 5 * 1024 * 1024;

/** A message longer than this is cut in the line and the JSON (the XML reader can quote the content it could not read). */
const MAX_MESSAGE_CHARS = 1_000;

/** What the check says of one model. */
export interface ModelVerdict {
  /** Whether the model loads as a deploy loads it. */
  readonly ok: boolean;
  /** The process key (the executable process's id) of a model that loads; null otherwise. */
  readonly processKey: string | null;
  /** The refused element's id, when the refusal names one. */
  readonly elementId: string | null;
  /** Its kind as the XML spells it (`userTask`, `dataObjectReference`), when the element is found. */
  readonly elementKind: string | null;
  /** Why it was refused and what to do (the parser's words, without the element id); null when it loads. */
  readonly message: string | null;
  /** The parser threw something other than a ModelError: a fault of the parser, not a verdict on the model. */
  readonly unexpected: boolean;
  /** What each element of a model that loads runs, as the engine read it (`--elements`). */
  readonly notes?: readonly ModelNote[];
}

/** One file's check. */
export interface ModelCheck extends ModelVerdict {
  /** The file as found: the path given, or a folder's path joined with the file's. */
  readonly file: string;
}

/** What `--json` prints of one file: the verdict without the internal `unexpected` flag. */
export interface ModelCheckView {
  readonly file: string;
  readonly ok: boolean;
  readonly processKey: string | null;
  readonly elementId: string | null;
  readonly elementKind: string | null;
  readonly message: string | null;
  /** With `--elements`, for a file that loads. */
  readonly elements?: readonly ModelNote[];
}

const oneLine = (text: string): string => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > MAX_MESSAGE_CHARS ? `${line.slice(0, MAX_MESSAGE_CHARS)}…` : line;
};

/** A refusal of the file itself, before any parse (too large, not a regular file, unreadable). */
export function refusedFile(message: string): ModelVerdict {
  return {
    ok: false,
    processKey: null,
    elementId: null,
    elementKind: null,
    message: oneLine(message),
    unexpected: false,
  };
}

/** What a throw of the parser (or of anything around it) means for the model. */
export function unexpectedVerdict(err: unknown): ModelVerdict {
  const name = err instanceof Error ? err.name : typeof err;
  return {
    ...refusedFile(
      `the parser failed with ${name}: ${errorMessage(err)} (a deploy fails on this file too; this is a fault of the parser, not a finding about the model: report it with the file)`,
    ),
    unexpected: true,
  };
}

/**
 * The kind of a moddle type as the XML spells it: `bpmn:UserTask` → `userTask`
 * (BPMN's elements are written lower camel case), any other package's type
 * as it is (`bpmndi:BPMNShape`).
 */
export function xmlKind(type: string): string {
  if (!type.startsWith('bpmn:')) return type;
  const local = type.slice('bpmn:'.length);
  return local.charAt(0).toLowerCase() + local.slice(1);
}

/**
 * The kind of the element with id `elementId` in `xml`, read once more with
 * bpmn-moddle; null when the XML does not read or holds no element of that
 * id. Never throws.
 */
export async function elementKindOf(xml: string, elementId: string): Promise<string | null> {
  try {
    const result = (await new BpmnModdle().fromXML(xml)) as { readonly elementsById?: unknown };
    const byId = result.elementsById;
    if (typeof byId !== 'object' || byId === null || !Object.hasOwn(byId, elementId)) return null;
    const type = (byId as Record<string, { readonly $type?: unknown } | undefined>)[elementId]?.$type;
    return typeof type === 'string' ? xmlKind(type) : null;
  } catch {
    return null;
  }
}

/**
 * The verdict on one model's XML: parsed as a deploy parses it
 * (parseProcessModel); a ModelError is a refusal naming the element, its kind
 * and what to do; anything else the parser throws is a refusal too, marked
 * `unexpected`. With `elements`, a model that loads carries what each
 * element runs (`--elements`); without, that is not worked out. Never throws.
 */
export async function checkModelXml(xml: string, elements = false): Promise<ModelVerdict> {
  try {
    const model = await parseProcessModel(xml);
    return {
      ok: true,
      processKey: model.key,
      elementId: null,
      elementKind: null,
      message: null,
      unexpected: false,
      ...(elements ? { notes: modelNotes(model) } : {}),
    };
  } catch (err) {
    if (!(err instanceof ModelError)) return unexpectedVerdict(err);
    const { elementId } = err;
    // ModelError's message starts with the element id; the id has a field of its own here.
    const prefix = elementId === null ? '' : `${elementId}: `;
    const message = err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
    return {
      ok: false,
      processKey: null,
      elementId,
      elementKind: elementId === null ? null : await elementKindOf(xml, elementId),
      message: oneLine(message),
      unexpected: false,
    };
  }
}

/**
 * One file's line: `FILE: loads, process KEY`, or `FILE: refused: KIND ID:
 * MESSAGE` (the kind and the id as far as known).
 */
export function checkLine(check: ModelCheck): string {
  if (check.ok) return `${check.file}: loads, process ${check.processKey ?? '?'}`;
  const element = [check.elementKind, check.elementId].filter((part) => part !== null).join(' ');
  return `${check.file}: refused: ${element === '' ? '' : `${element}: `}${check.message ?? 'no reason given'}`;
}

/**
 * `--elements`: under a file that loads, one line per element that runs
 * something, as the engine read it (`  ServiceTask_1 serviceTask: handler
 * of type notify (zeebe:taskDefinition, retries 5)`).
 */
export function noteLines(check: ModelCheck): string[] {
  return (check.notes ?? []).map((n) => `  ${n.id} ${n.kind}: ${n.notes.join('; ')}`);
}

/** The closing line: how many files, how many load, how many are refused. */
export function summaryLine(checks: readonly ModelCheck[]): string {
  const refused = checks.filter((c) => !c.ok).length;
  const files = `${checks.length} ${checks.length === 1 ? 'file' : 'files'}`;
  return `${files}: ${checks.length - refused} ${checks.length - refused === 1 ? 'loads' : 'load'}, ${refused} refused`;
}

/** What `--json` prints: one object per file, in the order checked; with `--elements`, each loading file's notes. */
export function checkViews(checks: readonly ModelCheck[], elements = false): ModelCheckView[] {
  return checks.map(({ file, ok, processKey, elementId, elementKind, message, notes }) => ({
    file,
    ok,
    processKey,
    elementId,
    elementKind,
    message,
    ...(elements && ok ? { elements: notes ?? [] } : {}),
  }));
}
