/**
 * Debian's chromium driven by playwright-core, for the console's browser
 * tests: one launcher with the flags a headless run in a container needs and
 * that keep chromium off the network (no component updates, no QUIC, no
 * sync), a fresh profile per launch, and page helpers that wait on the
 * page's own signal (`document.body.dataset.loaded`) instead of sleeping.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.INBOX_CHROMIUM ?? '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  readonly context: BrowserContext;
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/** Launches chromium with a new, empty profile (removed on close). */
export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'console-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    newPage: () => context.newPage(),
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Opens `url` and waits until the page says the view has drawn its data;
 * returns the milliseconds from navigation start to that moment, by the
 * page's own clock (`data-loaded-ms`). A page that ends in its error view
 * fails the wait with the error it shows.
 */
export async function openView(page: Page, url: string, view: string, timeoutMs = 15_000): Promise<number> {
  await page.goto(url);
  return waitLoaded(page, view, timeoutMs);
}

/** Waits for `document.body.dataset.loaded === view` (after an in-page navigation too); returns `data-loaded-ms`. */
export async function waitLoaded(page: Page, view: string, timeoutMs = 15_000): Promise<number> {
  const body = page.locator(`body[data-loaded="${view}"], body[data-loaded="error"]`);
  await body.waitFor({ state: 'attached', timeout: timeoutMs });
  if ((await body.getAttribute('data-loaded')) === 'error') {
    throw new Error(
      `the page shows an error instead of ${view}: ${(await page.locator('[data-testid="error-message"]').textContent()) ?? ''}`,
    );
  }
  return Number(await body.getAttribute('data-loaded-ms'));
}
