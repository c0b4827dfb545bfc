// The dashboard in a real browser: Debian's headless Chromium driven by playwright-core, against an
// agent with tokens, pods on the containerd lab and a device served by the reference mapper. Every
// wait is on a selector or a page condition; screenshots go to test-artifacts/dashboard/.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createToken } from '#lib/auth/tokens.ts';
import { CriClient } from '#lib/cri/client.ts';
import type { VirtualMapper } from '#lib/dmi/virtual-mapper.ts';
import { startTestAgent, type TestAgent } from '../helpers/agent.ts';
import { desired, device, MODEL, startMapper } from '../helpers/devices.ts';
import { labOrSkip } from '../helpers/lab.ts';

const ARTIFACTS = join(import.meta.dirname, '../../test-artifacts/dashboard');
const WAIT = 60_000;

const lab = await labOrSkip('test/e2e/dashboard.test.ts');
if (lab) {
  const root = mkdtempSync(join(tmpdir(), 'outpost-ui-'));
  const manifests = join(root, 'manifests');
  const dataDir = join(root, 'data');
  const tokensFile = join(root, 'tokens');
  const ns = `ui-${Math.random().toString(36).slice(2, 7)}`;
  mkdirSync(manifests);
  mkdirSync(ARTIFACTS, { recursive: true });
  const tokens = {
    viewer: createToken(tokensFile, 'vera', 'viewer'),
    operator: createToken(tokensFile, 'otto', 'operator'),
    admin: createToken(tokensFile, 'ada', 'admin'),
  };
  const ticker = `apiVersion: v1
kind: Pod
metadata: {name: ticker, namespace: ${ns}}
spec:
  containers:
    - name: main
      image: ${lab.images.app}
      imagePullPolicy: IfNotPresent
      command: ["sh", "-c", "i=0; while true; do i=$((i+1)); echo tick $i; sleep 1; done"]
`;
  writeFileSync(join(manifests, 'pods.yaml'), ticker);
  writeFileSync(join(manifests, 'devices.yaml'), [MODEL, device('thermometer', 'virtual')].join('---\n'));
  let agent: TestAgent;
  let vm: VirtualMapper;
  let context: BrowserContext;
  let page: Page;
  const cri = new CriClient({ endpoint: lab.endpoint });
  const row = `tr[data-pod="${ns}/ticker"]`;

  const text = async (selector: string) => (await page.textContent(selector)) ?? '';
  const signIn = async (token: string) => {
    await context.clearCookies();
    await page.goto(`${agent.url}/ui/`);
    await page.waitForSelector('input[name=token]');
    await page.fill('input[name=token]', token);
    await page.click('button[type=submit]');
    await page.waitForSelector('#pods');
  };

  test.before(async () => {
    agent = await startTestAgent({
      manifests,
      dataDir,
      runtimeEndpoint: lab.endpoint,
      flags: { tokensFile },
    });
    vm = await startMapper(join(root, 'virtual.sock'), join(dataDir, 'dmi.sock'));
    context = await chromium.launchPersistentContext(join(root, 'chromium-profile'), {
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      viewport: { width: 1200, height: 900 },
    });
    context.setDefaultTimeout(WAIT);
    page = context.pages()[0] ?? (await context.newPage());
    page.on('dialog', (d) => void d.accept());
  });

  test.after(async () => {
    await context?.close();
    await vm?.stop();
    await agent?.stop();
    for (const s of await cri.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.namespace': ns } }))
      await cri.removePodSandbox(s.id).catch(() => {});
    cri.close();
    rmSync(root, { recursive: true, force: true });
    await lab.stop();
  });

  test('without a token the dashboard asks for one; a wrong token is refused', async () => {
    const res = await fetch(`${agent.url}/ui/`, { redirect: 'manual', headers: { accept: 'text/html' } });
    assert.is(res.status, 303);
    assert.is(res.headers.get('location'), '/ui/login');
    await page.goto(`${agent.url}/ui/`);
    await page.waitForSelector('input[name=token]');
    assert.match(page.url(), /\/ui\/login$/);
    await page.fill('input[name=token]', 'opt_wrong');
    await page.click('button[type=submit]');
    await page.waitForSelector('[role=alert]');
    assert.match(await text('[role=alert]'), 'not valid');
  });

  test('an operator sees the node, pods live, and follows a pod’s log', async () => {
    await signIn(tokens.operator);
    assert.match(await text('header .who'), 'otto (operator)');
    await page.waitForSelector('tr[data-condition=Ready]');
    await page.waitForSelector('tr[data-condition=RuntimeReachable] td.ok');
    // Running arrives through the watch (the page may have been rendered before the pod started).
    await page.waitForSelector(`${row} td:text-is("Running")`);
    assert.is(await page.textContent(`${row} td[data-restarts]`), '0');
    assert.is(await page.$('#audit'), null, 'the audit trail is for admins');
    await page.click(`${row} button[data-logs]`);
    // Browser-side expressions as strings: the test's TypeScript has no DOM types.
    const lastTick =
      "Number((/tick (\\d+)\\n?$/.exec(document.getElementById('logs-text').textContent) || [])[1] || 0)";
    await page.waitForFunction(`${lastTick} > 0`);
    const first = Number(await page.evaluate(lastTick));
    await page.waitForFunction(`${lastTick} > ${first}`);
    assert.is(await page.getAttribute('#logs-text', 'data-state'), 'streaming');
    await page.screenshot({ path: join(ARTIFACTS, 'logs.png') });
    await page.click('#logs-close');
  });

  test('an operator restarts a pod: the restart count rises on the page by itself', async () => {
    await page.click(`${row} button[data-restart]`);
    await page.waitForSelector('#toast:not([hidden])');
    assert.match(await text('#toast'), 'Restarted ticker: main');
    await page.waitForSelector(`${row} td[data-restarts]:text-matches("^1")`);
    const rec = agent.store.audit.list({ limit: 20 }).find((a) => a.path.endsWith('/ticker/restart'));
    assert.equal([rec?.user, rec?.code], ['otto', 200]);
  });

  test('devices: live twins; a desired value out of range is refused, a good one applied by the mapper', async () => {
    const dev = '[data-device="default/thermometer"]';
    const prop = `${dev} tr[data-property="target-temperature"]`;
    await page.waitForSelector(`${prop} td[data-reported]:text-matches("22")`);
    await page.fill(`${prop} input[name=value]`, '50');
    await page.click(`${prop} button[type=submit]`);
    await page.waitForSelector(`${prop} output.bad`);
    assert.match(await text(`${prop} output`), 'must be at most 35');
    await page.fill(`${prop} input[name=value]`, '25');
    await page.click(`${prop} button[type=submit]`);
    await page.waitForSelector(`${prop} output.ok`);
    assert.is(desired(agent.store.devices.get('default', 'thermometer')!, 'target-temperature'), '25');
    // Leaving the form lets the live refresh in: the mapper's report of 25 shows up.
    await page.click('h2 >> text=Devices');
    await page.waitForSelector(`${prop} td[data-desired]:text-is("25")`);
    await page.waitForSelector(`${prop} td[data-reported]:text-matches("^25")`);
    const sw = `${dev} tr[data-property="switch"]`;
    await page.selectOption(`${sw} select[name=value]`, 'false');
    await page.click(`${sw} button[type=submit]`);
    await page.waitForSelector(`${sw} output.ok`);
    assert.is(desired(agent.store.devices.get('default', 'thermometer')!, 'switch'), 'false');
    await page.click('h2 >> text=Devices');
    await page.waitForSelector(`${sw} td[data-reported]:text-is("false")`);
    await page.screenshot({ path: join(ARTIFACTS, 'desktop.png'), fullPage: true });
  });

  test('the dashboard cookie alone cannot write: a cross-site style request is 403', async () => {
    const status = await page.evaluate(
      (path) => fetch(path, { method: 'POST', credentials: 'same-origin' }).then((r) => r.status),
      `/api/v1/namespaces/${ns}/pods/ticker/restart`,
    );
    assert.is(status, 403);
  });

  test('a viewer sees no restart button and no desired form', async () => {
    await signIn(tokens.viewer);
    await page.waitForSelector(`${row} button[data-logs]`);
    assert.is(await page.$(`${row} button[data-restart]`), null);
    assert.is(await page.$('form.desired'), null);
    assert.is(await page.$('#audit'), null);
  });

  test('an admin sees the audit trail; the page is readable on a phone', async () => {
    await signIn(tokens.admin);
    await page.waitForSelector('#audit td:has-text("otto")');
    const text = (await page.textContent('#audit')) ?? '';
    assert.match(text, `/api/v1/namespaces/${ns}/pods/ticker/restart`);
    assert.match(text, 'PATCH');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${agent.url}/ui/`);
    await page.waitForSelector(`${row} td:text-is("Running")`);
    const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'));
    assert.ok(overflow <= 1, `the page fits a phone's width (overflows by ${overflow}px)`);
    await page.screenshot({ path: join(ARTIFACTS, 'phone.png'), fullPage: true });
    await page.setViewportSize({ width: 1200, height: 900 });
  });

  test('signing out forgets the token', async () => {
    await page.click('header button[type=submit]');
    await page.waitForSelector('input[name=token]');
    const status = await page.evaluate("fetch('/ui/parts/pods').then((r) => r.status)");
    assert.is(status, 401);
  });
}
test.run();
