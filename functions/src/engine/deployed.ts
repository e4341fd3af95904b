import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProcessModel } from '../bpmn/model';
import { parseProcessModel } from '../bpmn/parse-model';
import { Engine, type MessageBuffer } from './engine';
import type { SyncHandler } from './run';

/**
 * Reads a BPMN file (UTF-8) and parses it with {@link parseProcessModel}. File
 * system errors pass through unchanged. Here, not in bpmn/, so the parser
 * stays free of I/O (the pure core, ARCHITECTURE.md).
 */
export async function loadProcessModel(path: string): Promise<ProcessModel> {
  return parseProcessModel(await readFile(path, 'utf8'));
}

/** Loads every `*.bpmn` of a directory and validates them against the registered handlers. */
export async function loadEngine(
  bpmnDir: string,
  sync: Readonly<Record<string, SyncHandler>>,
  asyncHandlerIds: ReadonlySet<string>,
  buffer: MessageBuffer | null = null,
): Promise<Engine> {
  const files = (await readdir(bpmnDir)).filter((f) => f.endsWith('.bpmn')).sort();
  if (files.length === 0) throw new Error(`no .bpmn files in ${bpmnDir}`);
  const models = await Promise.all(files.map((f) => loadProcessModel(join(bpmnDir, f))));
  return new Engine(models, sync, asyncHandlerIds, buffer);
}

/**
 * The BPMN XML text of the deployed model of a process key (the console
 * draws it), or null when no `*.bpmn` of the directory holds that process:
 * each file is parsed for its key, as loadEngine does.
 */
export async function deployedModelXml(bpmnDir: string, processKey: string): Promise<string | null> {
  let byKey = modelXmlByDir.get(bpmnDir);
  if (byKey === undefined) {
    byKey = readModelXml(bpmnDir);
    modelXmlByDir.set(bpmnDir, byKey);
    // A failed read (a missing folder) is not remembered: the next call tries again.
    byKey.catch(() => modelXmlByDir.delete(bpmnDir));
  }
  return (await byKey).get(processKey) ?? null;
}

/**
 * The XML of every model in a folder, by process key, read and parsed once
 * per process: the models are part of a deployment and never change under a
 * running one, and parsing them took 20–60 ms of every console request for
 * an instance page.
 */
const modelXmlByDir = new Map<string, Promise<ReadonlyMap<string, string>>>();

/** The XML of every model in a folder, by process key, read now (not the console's cached copy): what a function keeps as its versions. */
export async function readModelXml(bpmnDir: string): Promise<ReadonlyMap<string, string>> {
  const byKey = new Map<string, string>();
  const files = (await readdir(bpmnDir)).filter((f) => f.endsWith('.bpmn')).sort();
  for (const f of files) {
    const xml = await readFile(join(bpmnDir, f), 'utf8');
    const key = (await parseProcessModel(xml)).key;
    // The first file of a key wins, as the one-by-one search did.
    if (!byKey.has(key)) byKey.set(key, xml);
  }
  return byKey;
}
