// Screenshots of the main views (saved under e2e/artifacts/ to look at), the docs page with two
// embeds, the dark theme, and hostile fragments that must end in a message, not a hang.
import { test, expect } from '@playwright/test';
import { deflateRawSync } from 'node:zlib';
import { largestBox } from './canvas.mjs';

test('main views, dark theme and the docs page with embeds', async ({ page }) => {
  page.on('pageerror', (e) => { throw new Error(`page error: ${e.message}`); });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  // pane 2 (GE's runtime allocator) plans in the worker after the page is ready, and its
  // figures make the panes taller: measure the timeline once it is in, not before it moves
  await expect(page.getByTestId('pane1-peak')).toBeVisible();
  await page.screenshot({ path: 'artifacts/main.png', fullPage: true });
  // hover the centre of the largest tensor box of the timeline
  await page.getByTestId('curve').scrollIntoViewIfNeeded();
  // the canvas names the centre of its largest box in user units (1000 across)
  const c = await largestBox(page.locator('#timeline-canvas[data-largest]'));
  await page.mouse.move(c.x - 5, c.y);
  await page.mouse.move(c.x, c.y);
  await expect(page.getByTestId('tooltip')).toBeVisible();
  await page.screenshot({ path: 'artifacts/tooltip.png' });
  // click picks the step under the pointer; arrow keys step through time
  await page.mouse.click(c.x, c.y);
  const step = page.getByTestId('step');
  const picked = Number((await step.textContent()).match(/step (\d+)/)[1]);
  await expect(page.getByTestId('table-title')).toContainText(`step ${picked}`);
  await page.keyboard.press('ArrowRight');
  await expect(step).toContainText(`step ${picked + 1} /`);
  await expect(page.getByTestId('table-title')).toContainText(`step ${picked + 1}`);
  await page.getByRole('button', { name: 'toggle light/dark theme' }).click();
  await expect(page.locator('html[data-theme="dark"]')).toHaveCount(1);
  await page.screenshot({ path: 'artifacts/dark.png', fullPage: true });
  expect(errors).toEqual([]);

  await page.goto('/embed-example.html');
  const frames = page.frameLocator('iframe');
  await expect(frames.first().getByTestId('open-in-playground')).toBeVisible();
  await expect(page.frameLocator('iframe').nth(1).getByTestId('pane0-peak')).toBeVisible();
  await page.screenshot({ path: 'artifacts/embed-example.png', fullPage: true });
});

// A link's state as the page packs it: base64url of raw deflate of the JSON.
const pack = (state) => `v=1&z=${deflateRawSync(Buffer.from(JSON.stringify(state))).toString('base64url')}`;
const pane = { s: 'ge-block', a: 512, g: true, r: true, z: true, c: true };
const cycle = '{"format":"memplan.graph/1","name":"cyc","tensors":[{"name":"a","bytes":100},{"name":"b","bytes":200}],"ops":[{"name":"o1","inputs":["b"],"outputs":["a"]},{"name":"o2","inputs":["a"],"outputs":["b"]}],"outputs":["b"]}';

for (const [what, fragment] of [
  // an inline model that does not build, a model URL that does not answer
  ['an inline model that fails', pack({ m: { text: { name: 'cyc.json', text: cycle } }, p: [pane] })],
  ['a model URL that fails', pack({ m: { url: 'http://127.0.0.1:9/x.onnx' }, p: [pane] })],
  ['a newer version', 'v=9&z=abc'],
  ['bad base64', 'v=1&z=%%%%'],
  ['a huge fragment', `v=1&z=${'A'.repeat(600 * 1024)}`],
  ['valid base64 of garbage', 'v=1&z=AAAAAAAAAAAAAAAA'],
]) {
  test(`a link with ${what} shows an error and the default sample`, async ({ page }) => {
    await page.goto(`/#${fragment}`);
    await expect(page.getByTestId('link-error')).toBeVisible();
    await expect(page.locator('html[data-ready]')).toHaveCount(1);
    await expect(page.getByTestId('pane0-peak')).toBeVisible();
  });
}

test('a host page hands a model to an embed by postMessage and hears how it went', async ({ page }) => {
  const base = test.info().project.use.baseURL;
  // a host page of the playground's origin (an about:blank page cannot frame it here)
  await page.goto('/embed-example.html');
  const csv = 'id,lower,upper,size\n0,0,2,100\n1,1,3,60\n2,2,4,40\n';
  await page.setContent(`<!doctype html><body>
    <iframe id="f" src="${base}/?embed=1" style="width:900px;height:700px"></iframe>
    <script>
      window.replies = [];
      addEventListener('message', (e) => {
        if (!e.data || !String(e.data.type).startsWith('memplan:') || e.data.type === 'memplan:height') return;
        window.replies.push(e.data);
        if (e.data.type === 'memplan:ready') {
          e.source.postMessage({ type: 'memplan:model', name: 'chain.csv', text: ${JSON.stringify(csv)} }, '*');
        }
      });
    </script></body>`);
  const frame = page.frameLocator('#f');
  // the chain's bound is 160 B (testdata/cases/chain-reuse.json), reached by packing
  await expect(frame.getByTestId('pane1-peak')).toHaveAttribute('data-bytes', '160');
  await expect.poll(() => page.evaluate(() => window.replies.map((r) => r.type))).toEqual(['memplan:ready', 'memplan:loaded']);
  expect(await page.evaluate(() => window.replies[1])).toEqual({ type: 'memplan:loaded', name: 'chain.csv', ok: true });
  // a bad model: the embed says why, keeps the open one, and the host hears the error
  await page.evaluate(() => document.getElementById('f').contentWindow.postMessage({ type: 'memplan:model', name: 'bad.csv', text: 'garbage\n' }, '*'));
  await expect(frame.getByTestId('load-error')).toContainText('bad.csv');
  await expect(frame.getByTestId('pane1-peak')).toHaveAttribute('data-bytes', '160');
  await expect.poll(() => page.evaluate(() => window.replies.length)).toBe(3);
  const bad = await page.evaluate(() => window.replies[2]);
  expect(bad.ok).toBe(false);
  expect(bad.error).toContain('bad.csv');
  // messages of other kinds are ignored
  await page.evaluate(() => document.getElementById('f').contentWindow.postMessage({ type: 'other', bytes: 5 }, '*'));
  await page.evaluate(() => document.getElementById('f').contentWindow.postMessage('memplan:model', '*'));
  await expect(frame.getByTestId('pane1-peak')).toHaveAttribute('data-bytes', '160');
});

test('the theme the user picks is kept across reloads (localStorage)', async ({ page }) => {
  await page.emulateMedia({ colorScheme: 'light' });
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await expect(page.locator('html[data-theme="light"]')).toHaveCount(1);
  await page.getByRole('button', { name: 'toggle light/dark theme' }).click();
  await expect(page.locator('html[data-theme="dark"]')).toHaveCount(1);
  await page.reload();
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await expect(page.locator('html[data-theme="dark"]')).toHaveCount(1);
  await page.getByRole('button', { name: 'toggle light/dark theme' }).click();
  await page.reload();
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await expect(page.locator('html[data-theme="light"]')).toHaveCount(1);
});
