/**
 * The Firebase Rules API calls that `deploy.sh --dry-run` prints are meant
 * to be pasted: run as printed, by bash, against a local stand-in of the API
 * (curl's URL pointed at it, nothing else changed), they must reach it with
 * the token as their Authorization header while the token stays out of every
 * process's arguments, which ps and /proc show to every user of the machine.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { listenStandIn } from '../support/standin-server';
import { commandsOf, deploy, PROJECT, REGION, sandbox, useSandbox } from './helpers';

useSandbox();

describe('the Rules API calls a dry run prints, pasted into bash', () => {
  it("reach the API with the token as their Authorization header, and the token is in no process's arguments", async () => {
    const token = 'ya29.pasted-rules-token';
    const received: Array<{ method: string; url: string; headers: IncomingHttpHeaders; body: string }> = [];
    const unexpected: string[] = [];
    const answer = `{"name":"projects/${PROJECT}/rulesets/rs-pasted"}`;
    const { server, url } = await listenStandIn((req, body, res) => {
      received.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: body.toString('utf8'),
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(answer);
    }, unexpected);
    try {
      // The dry run's temporary files under the sandbox: the pasted lines name their body files there.
      const tmp = mkdtempSync(join(sandbox(), 'tmp-'));
      const dry = deploy(['--project', PROJECT, '--region', REGION, '--dry-run'], { TMPDIR: tmp });
      expect(dry.status).toBe(0);
      const lines = commandsOf(dry.stdout).filter((c) => c.includes(' https://firebaserules.googleapis.com/v1/'));
      expect(lines).toHaveLength(2);

      // Every program a pasted line starts records its arguments: gcloud (a stand-in that prints the token),
      // sed and curl (the real ones, curl pointed at the local stand-in of the API instead of Google).
      const bin = mkdtempSync(join(sandbox(), 'paste-bin-'));
      const argv = join(bin, 'argv.log');
      const real = (tool: string): string =>
        execFileSync('bash', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim();
      const log = (tool: string): string => `printf '${tool} %s\\n' "$*" >> '${argv}'`;
      const tools: Record<string, string[]> = {
        gcloud: [log('gcloud'), `[[ "$*" == 'auth print-access-token' ]] || exit 3`, `echo '${token}'`],
        sed: [log('sed'), `exec '${real('sed')}' "$@"`],
        curl: [
          log('curl'),
          'args=()',
          'for a in "$@"; do',
          '  case $a in https://firebaserules.googleapis.com/*) a="$RULES_STAND_IN${a#https://firebaserules.googleapis.com/}" ;; esac',
          '  args+=("$a")',
          'done',
          `exec '${real('curl')}' "\${args[@]}"`,
        ],
      };
      for (const [tool, script] of Object.entries(tools)) {
        writeFileSync(join(bin, tool), ['#!/bin/bash', ...script, ''].join('\n'));
        chmodSync(join(bin, tool), 0o755);
      }

      for (const [i, line] of lines.entries()) {
        // The bodies are temporary files of the script (gone with it): an operator writes their own.
        const file = /--data-binary @(\S+)/.exec(line)?.[1] ?? '';
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, `{"pasted":${i}}`);
        const run = await promisify(execFile)('bash', ['-c', line], {
          env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, RULES_STAND_IN: url },
          timeout: 30_000,
        });
        expect(run.stdout).toBe(answer);
      }

      // No process saw the token among its arguments: bash (the pasted line itself), gcloud, sed, curl.
      for (const line of lines) expect(line).not.toContain(token);
      const started = readFileSync(argv, 'utf8');
      expect(started).not.toContain(token);
      expect(
        started
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => l.split(' ')[0]),
      ).toEqual(expect.arrayContaining(['gcloud', 'sed', 'curl']));
      // The API got both calls, each with the token as its Authorization header and its body.
      expect(unexpected).toEqual([]);
      expect(
        received.map((r) => [r.method, r.url, r.headers.authorization, r.headers['x-goog-user-project'], r.body]),
      ).toEqual([
        ['POST', `/v1/projects/${PROJECT}/rulesets`, `Bearer ${token}`, PROJECT, '{"pasted":0}'],
        ['POST', `/v1/projects/${PROJECT}/releases`, `Bearer ${token}`, PROJECT, '{"pasted":1}'],
      ]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 60_000);
});
