import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { freePort } from '../../../tools/emulators/ports';

/**
 * Spawns the Functions Framework CLI (as Cloud Run starts an instance) on
 * `source` with `target` and `env`, and resolves with the ms until its first
 * HTTP answer (any status); the child is killed after. The cold-start
 * measure of bench/cold-start.ts and bench/trace-cost.ts.
 */
export async function firstAnswer(
  root: string,
  source: string,
  target: string,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const port = await freePort();
  const cli = join(root, 'node_modules', '@google-cloud', 'functions-framework', 'build', 'src', 'main.js');
  const started = performance.now();
  const child = spawn(process.execPath, [cli, `--target=${target}`, `--port=${port}`, `--source=${source}`], {
    cwd: root,
    env,
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${target} exited with ${child.exitCode} before answering`);
      const answered = await new Promise<boolean>((resolve) => {
        const req = request({ host: '127.0.0.1', port, path: '/', method: 'GET' }, (res) => {
          res.resume();
          resolve(true);
        });
        req.on('error', () => resolve(false));
        req.end();
      });
      if (answered) return performance.now() - started;
      // Polling the port, not sleeping for the result: the gap bounds the resolution at 2 ms.
      await new Promise((r) => setTimeout(r, 2));
    }
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}
