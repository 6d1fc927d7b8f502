// Links and embeds carry any model a user can plan: a model file too large to inline travels
// as its lowered problem (the link's `m=` part), up to a cap past which the link says why it
// leaves the model out; and a model referenced by URL (`?model=`) opens and plans as the CLI
// says.
import { test, expect } from '@playwright/test';
import { packSecondPane, setGears } from './page.mjs';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { memplan } from './memplan.mjs';
import { trace } from '../traces.mjs';

const samples = fileURLToPath(new URL('../../static/samples/', import.meta.url));

async function ready(page) {
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
}

async function peak(page, i, timeout = 20_000) {
  const dd = page.getByTestId(`pane${i}-peak`);
  await expect(dd).toBeVisible({ timeout });
  return Number(await dd.getAttribute('data-bytes'));
}

test.beforeEach(async ({ page, context }) => {
  page.on('pageerror', (e) => { throw new Error(`page error: ${e.message}`); });
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
});

test('an ONNX file travels in the link as its lowered problem and plans to the same figures, gears and file name kept', async ({ page, context }) => {
  // the CLI on the same file and gears (GE's default: the batch dim bound per gear)
  const cli = JSON.parse(memplan([
    'plan', 'static/samples/resnet50_randinit.stripped.onnx', '--batch', '1,2',
    '--strategy', 'ge-block', '--strategy', 'greedy-size-best-fit', '--format', 'json',
  ])).plans;
  await page.goto('/');
  await ready(page);
  await packSecondPane(page);
  // a local file, not the sample: a link cannot name it
  await page.getByTestId('file').setInputFiles(`${samples}/resnet50_randinit.stripped.onnx`);
  await expect(page.locator('section.summary')).toContainText('122 steps');
  await setGears(page, '1,2');
  for (const i of [0, 1]) {
    await expect(page.getByTestId(`pane${i}-peak`)).toHaveAttribute('data-bytes', String(cli[i].peak_bytes));
    await expect(page.getByTestId(`pane${i}-overlay`)).toHaveAttribute('data-overlay', String(cli[i].overlay_bytes));
  }
  await page.getByTestId('copy-link').click();
  const notice = page.getByTestId('notice');
  await expect(notice).toContainText('Link copied: it reproduces this view.');
  await expect(notice).toContainText("carries this model's lowered problem");
  await expect(notice).toContainText(/\([\d,]+ characters of link\), not the file: its buffers with their sizes and live ranges, ops and shapes/);
  const url = await page.evaluate(() => navigator.clipboard.readText());
  expect(url).toMatch(/#v=1&z=[^&]+&m=/);
  expect(page.url()).toBe(url);

  // a fresh page: no file, only the link
  const other = await context.newPage();
  await other.goto(url);
  await ready(other);
  await expect(other.getByTestId('model-missing')).toHaveCount(0);
  await expect(other.getByTestId('link-error')).toHaveCount(0);
  await expect(other.getByTestId('model-name')).toHaveText('resnet50_randinit.stripped');
  await expect(other.locator('section.summary')).toContainText('resnet50_randinit.stripped.onnx · lowered problem from the link');
  const note = other.getByTestId('lowered-note');
  await expect(note).toContainText('lowered problem of resnet50_randinit.stripped.onnx (lowered with batch = 1, gears 1,2)');
  await expect(note).toContainText('cannot be changed here');
  await expect(note).toContainText("its ops and the table's shapes");
  // the graph's settings cannot be changed without the graph
  await expect(other.getByTestId('gears')).toHaveCount(0);
  for (const i of [0, 1]) {
    await expect(other.getByTestId(`pane${i}-peak`)).toHaveAttribute('data-bytes', String(cli[i].peak_bytes));
    await expect(other.getByTestId(`pane${i}-overlay`)).toHaveAttribute('data-overlay', String(cli[i].overlay_bytes));
  }
  // the gear shown, the ops and the shapes travel: the table at the largest gear
  await expect(other.getByTestId('gear')).toHaveValue('2');
  await expect(other.getByTestId('tensor-table').locator('tbody')).toContainText('(Conv)');
  await expect(other.getByTestId('tensor-table').locator('tbody')).toContainText('2×');
  // a link made from the reopened view carries the same model
  await other.getByTestId('copy-link').click();
  await expect(other.getByTestId('notice')).toContainText("carries this model's lowered problem");
  expect(other.url().split('&m=')[1]).toBe(url.split('&m=')[1]);
  // and so does its embed, which says so
  await other.getByTestId('embed').click();
  await expect(other.getByTestId('embed-lowered')).toContainText("The embed carries this model's lowered problem");
  await expect(other.getByTestId('embed-warning')).toHaveCount(0);
  const snippet = await other.getByTestId('embed-snippet').inputValue();
  expect(snippet).toContain('title="memplan: resnet50_randinit.stripped.onnx"');
  const src = snippet.match(/src="([^"]+)"/)[1].replaceAll('&amp;', '&');
  await other.goto(src);
  await ready(other);
  await expect(other.locator('.app.embed')).toBeVisible();
  await expect(other.getByTestId('model-missing')).toHaveCount(0);
  for (const i of [0, 1]) {
    await expect(other.getByTestId(`pane${i}-peak`)).toHaveAttribute('data-bytes', String(cli[i].peak_bytes));
  }
});

test('a large trace (18,000 buffers) travels in the link and the fresh page plans it to the same peaks', async ({ page, context }, testInfo) => {
  test.setTimeout(240_000);
  const n = 18_000;
  const file = testInfo.outputPath(`trace-${n}.csv`);
  writeFileSync(file, trace(n));
  // the CLI's exact defaults for a buffer list (no alignment, no padding), as the panes have
  const out = testInfo.outputPath('plan.json');
  memplan(['plan', file, '--strategy', 'ge-block', '--strategy', 'greedy-size-best-fit', '--format', 'json', '-o', out]);
  const cli = JSON.parse(readFileSync(out, 'utf8')).plans;
  await page.goto('/');
  await ready(page);
  await page.getByTestId('file').setInputFiles(file);
  await expect(page.locator('section.summary')).toContainText(`trace-${n}.csv`, { timeout: 60_000 });
  const before = [await peak(page, 0, 120_000), await peak(page, 1, 120_000)];
  expect(before).toEqual([cli[0].peak_bytes, cli[1].peak_bytes]);
  await page.getByTestId('copy-link').click();
  await expect(page.getByTestId('notice')).toContainText("carries this model's lowered problem", { timeout: 30_000 });
  const url = await page.evaluate(() => navigator.clipboard.readText());
  expect(url).toContain('&m=');
  // a buffer list carries no ops or shapes, and the length is the m= part's, in characters
  const said = await page.getByTestId('notice').textContent();
  expect(said).not.toContain('ops and shapes');
  const m = url.split('&m=')[1].split('&')[0];
  expect(said).toContain(`(${m.length.toLocaleString('en-US')} characters of link)`);
  expect(url.length).toBeGreaterThan(8 * 1024);
  expect(url.length).toBeLessThan(1_600_000);

  await page.close();
  const other = await context.newPage();
  await other.goto(url);
  await ready(other);
  await expect(other.locator('section.summary')).toContainText(`trace-${n}.csv · lowered problem from the link · 18,000 buffers`, { timeout: 60_000 });
  await expect(other.getByTestId('model-missing')).toHaveCount(0);
  await expect(other.getByTestId('lowered-note')).toContainText(`lowered problem of trace-${n}.csv`);
  await expect(other.getByTestId('lowered-note')).toContainText('its buffers with their sizes and live ranges, so every plan is');
  await expect(other.getByTestId('lowered-note')).not.toContainText('ops');
  expect([await peak(other, 0, 120_000), await peak(other, 1, 120_000)]).toEqual(before);
});

test('a model opened by ?model=<url> plans as `memplan plan` says, and its link keeps the URL', async ({ page, context, baseURL }) => {
  const cli = JSON.parse(memplan([
    'plan', 'static/samples/resnet50_randinit.stripped.onnx', '--dim', 'batch=1',
    '--strategy', 'ge-block', '--strategy', 'greedy-size-best-fit', '--format', 'json',
  ])).plans;
  // served by the test server beside the page (dist/samples), fetched by the browser
  const model = `${baseURL}/samples/resnet50_randinit.stripped.onnx`;
  await page.goto(`/?model=${encodeURIComponent(model)}`);
  await ready(page);
  await expect(page.getByTestId('link-error')).toHaveCount(0);
  await expect(page.getByTestId('model-name')).toHaveText('resnet50_randinit.stripped');
  await expect(page.locator('section.summary')).toContainText('resnet50_randinit.stripped.onnx · ONNX');
  await expect(page.locator('section.summary')).toContainText('122 steps');
  await packSecondPane(page);
  for (const i of [0, 1]) {
    await expect(page.getByTestId(`pane${i}-peak`)).toHaveAttribute('data-bytes', String(cli[i].peak_bytes));
  }
  // the link refers to the URL: small, and the fresh page fetches the model again
  await page.getByTestId('copy-link').click();
  await expect(page.getByTestId('notice')).toContainText('Link copied: it reproduces this view.');
  const url = await page.evaluate(() => navigator.clipboard.readText());
  expect(url).not.toContain('&m=');
  expect(url.length).toBeLessThan(2048);
  const other = await context.newPage();
  const fetched = [];
  other.on('request', (r) => { if (r.url() === model) fetched.push(r.url()); });
  await other.goto(url);
  await ready(other);
  await expect(other.getByTestId('model-name')).toHaveText('resnet50_randinit.stripped');
  for (const i of [0, 1]) {
    await expect(other.getByTestId(`pane${i}-peak`)).toHaveAttribute('data-bytes', String(cli[i].peak_bytes));
  }
  expect(fetched).toEqual([model]);
});
