import type { Engine } from '../engine/engine';
import type { Logger } from '../log';

/**
 * One WARNING line per process version the engine met without its stored
 * XML (engine/store/versions.ts: such an instance runs on the deployed
 * model), each once in the life of the engine (Engine.takeUnstored). Called
 * after each batch and each fast-path document.
 */
export function logUnstored(engine: Engine, log: Logger): void {
  for (const key of engine.takeUnstored()) {
    const at = key.lastIndexOf('@');
    const processKey = key.slice(0, at);
    const processVersion = key.slice(at + 1);
    log.warn(
      `instances of ${processKey} version ${processVersion} run on the deployed model: that version was never stored; register its XML with \`inbox versions --register FILE\``,
      { processKey, processVersion },
    );
  }
}
