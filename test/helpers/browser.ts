import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { buildWeb } from '../../web/build-if-stale.mjs';
import type { Customer } from './management.ts';

/** Debian's Chromium (CI installs it with apt-get, DESIGN §11). */
export const CHROMIUM = process.env.TOLLGATE_CHROMIUM ?? '/usr/bin/chromium';

/** Nothing of Chromium's own reaches the network: no updates, sync, field trials or QUIC probes. */
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'];

/** Builds web/dist when it is older than web/src (a test never runs against a stale build), then starts Chromium. */
export async function launchBrowser(): Promise<Browser> {
  buildWeb();
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}

export interface RecordedPage {
  page: Page;
  context: BrowserContext;
  /** Every URL the page asked for (documents, scripts, styles, images, API calls). */
  requests: string[];
  /** Uncaught errors of the page and Content-Security-Policy violations. */
  problems: string[];
}

/** A fresh browser profile (its own cookies) whose every request and page error is recorded. */
export async function openPage(browser: Browser, options: { width?: number } = {}): Promise<RecordedPage> {
  const context = await browser.newContext({ viewport: { width: options.width ?? 1280, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const requests: string[] = [];
  const problems: string[] = [];
  page.on('request', (request) => void requests.push(request.url()));
  page.on('pageerror', (error) => void problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Refused to/i.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  return { page, context, requests, problems };
}

/** URLs outside the gateway under test (nothing may load from the internet, DESIGN §11). */
export const foreignRequests = (requests: readonly string[], gatewayUrl: string): string[] =>
  requests.filter((url) => !url.startsWith(`${gatewayUrl}/`) && url !== gatewayUrl && !url.startsWith('data:') && !url.startsWith('blob:'));

/** Signs in through the login form, as a person does, and waits for the console. */
export async function signInThroughForm(page: Page, gatewayUrl: string, customer: Pick<Customer, 'email' | 'password'>): Promise<void> {
  await page.goto(`${gatewayUrl}/login`);
  await page.getByLabel('Email').fill(customer.email);
  await page.getByLabel('Password').fill(customer.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${gatewayUrl}/console`);
}

/**
 * Starts a console test's pieces together (gateway, Chromium, stand-ins). When one fails — Chromium missing, say — those
 * that started are closed before the failure is thrown, so the test file fails instead of hanging on an open server.
 */
export async function startTogether<T extends readonly unknown[]>(...starts: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(starts);
  const failed = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (!failed) return settled.map((outcome) => (outcome as PromiseFulfilledResult<unknown>).value) as unknown as T;
  for (const outcome of settled) {
    const value = outcome.status === 'fulfilled' ? (outcome.value as { close?: () => Promise<unknown> } | undefined) : undefined;
    await value?.close?.().catch(() => undefined);
  }
  throw failed.reason;
}
