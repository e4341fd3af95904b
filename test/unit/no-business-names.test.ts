import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The system names no business: the names of the work-order example (its
 * process, messages, steps, invoices) appear only in its folder. What is
 * scanned is what runs or is deployed for every app: functions/src, the
 * console page, the local stack and the build, the deploy scripts and the
 * monitoring files. The default app's folder may be named (it is the
 * default of INBOX_APP); nothing else of it.
 */
const ROOT = join(__dirname, '..', '..');
const SCANNED = ['functions/src', 'console-ui/src', 'console-ui/index.html', 'tools/local', 'tools/build', 'infra'];
const TEXT = /\.(ts|js|cjs|mjs|sh|json|html|css|md)$/;
/** The example's words, as its files spell them. */
const FORBIDDEN: readonly RegExp[] = [
  /work[ -]?orders?/i,
  /invoic/i,
  /\bWO-\d/,
  /handOver|escalateOverdue|completionReport/,
];
/** The one way the system may mention the default app: its folder, the default of INBOX_APP. */
const ALLOWED = /examples\/work-orders/g;

function files(path: string): string[] {
  const full = join(ROOT, path);
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full).flatMap((name) => files(join(path, name)));
}

/** Every line of the scanned files that names the example, as `file:line: text`. */
export function businessLines(): string[] {
  const found: string[] = [];
  for (const file of SCANNED.flatMap(files).filter((f) => TEXT.test(f))) {
    readFileSync(join(ROOT, file), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        const rest = line.replace(ALLOWED, '');
        if (FORBIDDEN.some((re) => re.test(rest)))
          found.push(`${relative(ROOT, join(ROOT, file))}:${i + 1}: ${line.trim().slice(0, 160)}`);
      });
  }
  return found;
}

test('functions/src, the console page, the local stack, the build and infra/ name no business of the example', () => {
  expect(businessLines()).toEqual([]);
});

test('the scan sees what it looks for: a line naming the example outside its folder is found', () => {
  const line = 'publishes the work order to the provider';
  expect(FORBIDDEN.some((re) => re.test(line.replace(ALLOWED, '')))).toBe(true);
  expect(FORBIDDEN.some((re) => re.test("INBOX_APP: 'examples/work-orders',".replace(ALLOWED, '')))).toBe(false);
});
