import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { SignJWT } from 'jose';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadGatewayConfig } from '../../../src/config/gateway-config.js';
import { buildGateway } from '../../../src/gateway/build-gateway.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { Gates } from '../producer/routing-llm.js';
import { browserAvailable, CHROMIUM_PATH, launchBrowser, screenshotDir } from './viewer-browser.js';
import { SLOW_WORDS, ViewerLlm } from './viewer-llm.js';

const SECRET = 'viewer-e2e-secret-of-at-least-32-bytes!';
const WAIT_MS = 20_000;

if (!browserAvailable()) console.warn(`viewer e2e skipped: no browser at ${CHROMIUM_PATH} (apt-get install chromium; under CI=true this fails instead)`);

/**
 * The viewer in Debian's Chromium against a real fleet: Postgres, Redis, a worker, and the gateway in
 * this process with JWT auth. It sends a message, watches the reply stream, reloads mid-answer and
 * finds the same text once, answers a `request_user_input` question, and cancels a running input.
 */
describe.runIf(browserAvailable())('viewer in a browser', () => {
  let fleet: FleetFixture;
  let queue: SessionQueue;
  let redis: Redis;
  let app: FastifyInstance;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  let base: string;
  let token: string;
  const gates = new Gates();
  const shots = screenshotDir();

  beforeAll(async () => {
    await buildViewerIfMissing();
    fleet = await FleetFixture.create('viewer_e2e');
    await fleet.startWorker({ llm: new ViewerLlm(gates) });
    queue = new SessionQueue({ databaseUrl: fleet.config.databaseUrl, redisUrl: fleet.config.redisUrl, queueName: fleet.config.queueName });
    redis = new Redis(fleet.config.redisUrl, { maxRetriesPerRequest: null });
    const { gateway } = loadGatewayConfig(Object.assign({}, fleet.env, { GATEWAY_PORT: '0', GATEWAY_JWT_SECRET: SECRET, GATEWAY_SSE_HEARTBEAT_MS: '1000' }));
    app = await buildGateway({ queue, config: gateway, redis });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    token = await new SignJWT({ tenant: 'default', scope: 'write' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('viewer-e2e')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(SECRET));
    browser = await launchBrowser();
    page = await browser.context.newPage();
  });

  afterAll(async () => {
    gates.openAll();
    await browser?.close();
    await app?.close();
    await redis?.quit();
    await queue?.close();
    await fleet?.close();
  });

  it('asks for the token, lists sessions and opens one', async () => {
    const adds = await Promise.all(['order-1042', 'order-1043', 'viewer-list'].map((sessionId) => queue.add('send', { sessionId, input: 'hello viewer' })));
    for (const handle of adds) await handle.result({ timeoutMs: WAIT_MS });
    await page.goto(base);
    await page.getByTestId('token-input').fill(token);
    await page.getByTestId('token-save').click();
    await page.getByTestId('whoami').waitFor({ timeout: WAIT_MS });
    const row = page.locator('[data-testid="session-row"][data-session-id="viewer-list"]');
    await row.waitFor({ timeout: WAIT_MS });
    expect(await row.textContent()).toContain('default');
    if (shots !== null) await page.screenshot({ path: join(shots, 'viewer-list.png') });
    await row.getByRole('link', { name: 'viewer-list' }).click();
    await page.waitForURL(`${base}/sessions/viewer-list`);
    await waitForText(page, '[data-testid="message"][data-role="assistant"]', 'Echo: hello viewer');
  });

  it('streams a reply, and a reload mid-answer shows the same text once', async () => {
    await sendFromComposer(page, 'slow:reload');
    const half = SLOW_WORDS.slice(0, SLOW_WORDS.length / 2).join('');
    await waitForText(page, '[data-testid="streaming-text"]', half);
    await page.reload();
    await waitForText(page, '[data-testid="streaming-text"]', half);
    expect(await page.getByTestId('streaming-text').allTextContents()).toEqual([half]);
    gates.open('reload');
    const full = SLOW_WORDS.join('');
    await waitForText(page, '[data-testid="message"][data-role="assistant"]', full);
    await page.locator('[data-testid="streaming-message"]').waitFor({ state: 'detached', timeout: WAIT_MS });
    const answers = await page.locator('[data-testid="message"][data-role="assistant"] [data-testid="message-text"]').allTextContents();
    expect(answers.filter((text) => text.includes('Once upon'))).toEqual([full]);
  });

  it('answers a request_user_input question', async () => {
    await sendFromComposer(page, 'ask:Which colour?');
    await waitForText(page, '[data-testid="question-prompt"]', 'Which colour?');
    await page.getByTestId('question-answer').fill('blue');
    await page.getByTestId('question-submit').click();
    await waitForText(page, '[data-testid="message"][data-role="assistant"]', 'Got: blue');
    await page.getByTestId('question').waitFor({ state: 'detached', timeout: WAIT_MS });
    if (shots !== null) await page.screenshot({ path: join(shots, 'viewer-session.png'), fullPage: true });
  });

  it('cancels a running input', async () => {
    await sendFromComposer(page, 'hold:forever');
    const seq = Math.max(...(await page.locator('[data-testid="input-row"]').evaluateAll((rows) => rows.map((row) => Number(row.getAttribute('data-seq'))))));
    await page.locator(`[data-testid="input-row"][data-seq="${seq}"][data-status="running"]`).waitFor({ timeout: WAIT_MS });
    await page.getByTestId('cancel-button').click();
    await page.locator(`[data-testid="input-row"][data-seq="${seq}"][data-status="cancelled"]`).waitFor({ timeout: WAIT_MS });
    expect((await fleet.store.getInput('viewer-list', seq))?.status).toBe('cancelled');
  });

  it('shows the raw events', async () => {
    await page.getByTestId('tab-raw').click();
    await page.locator('[data-testid="raw-event"][data-type="input_finished"]').first().waitFor({ timeout: WAIT_MS });
    await page.getByTestId('tab-conversation').click();
  });
});

/** Types a message into the session page's composer and waits until its input row appears. */
async function sendFromComposer(page: Page, text: string): Promise<void> {
  const before = await page.locator('[data-testid="input-row"]').count();
  await page.getByTestId('composer-input').fill(text);
  await page.getByTestId('composer-send').click();
  await page.waitForFunction((count) => (globalThis as unknown as { document: BrowserDocument }).document.querySelectorAll('[data-testid="input-row"]').length > count, before, { timeout: WAIT_MS });
}

/** Waits until some element matching `selector` has exactly `text` as its text (user messages excluded by the selector). */
async function waitForText(page: Page, selector: string, text: string): Promise<void> {
  await page.waitForFunction(
    ([css, want]) => [...(globalThis as unknown as { document: BrowserDocument }).document.querySelectorAll(css)].some((element) => (element.querySelector('[data-testid="message-text"]') ?? element).textContent === want),
    [selector, text] as const,
    { timeout: WAIT_MS },
  );
}

interface BrowserElement {
  textContent: string | null;
  querySelector(selector: string): BrowserElement | null;
}

/** The page's `document` as the functions that run in the browser use it (this file is compiled without the DOM library). */
interface BrowserDocument {
  querySelectorAll(selector: string): BrowserElement[] & { length: number };
}

/** The gateway serves dist/viewer; build it when the test runs without `npm run build` first. */
async function buildViewerIfMissing(): Promise<void> {
  if (existsSync(join(process.cwd(), 'dist', 'viewer', 'index.html'))) return;
  const { build } = await import('vite');
  await build({ configFile: join(process.cwd(), 'viewer', 'vite.config.ts'), logLevel: 'warn' });
}
