// Exports: plan JSON in the CLI's schema, the timeline as SVG and PNG, the tensors as CSV.
import { test, expect } from '@playwright/test';
import { packSecondPane, setGears } from './page.mjs';
import { readFileSync } from 'node:fs';
import { memplan, root } from './memplan.mjs';
import { join } from 'node:path';

async function download(page, testid) {
  const [d] = await Promise.all([page.waitForEvent('download'), page.getByTestId(testid).click()]);
  return { name: d.suggestedFilename(), bytes: readFileSync(await d.path()) };
}

test('exports plan JSON, SVG, PNG and CSV of the shown view', async ({ page }) => {
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  const peak0 = Number(await page.getByTestId('pane0-peak').getAttribute('data-bytes'));

  const json = await download(page, 'export-json');
  const plan = JSON.parse(json.bytes.toString('utf8'));
  expect(plan.format).toBe('memplan.plan/1');
  expect(plan.problem.lower_bound_bytes).toBe(9_633_792);
  expect(plan.plans[0].peak_bytes).toBe(peak0);

  const svg = await download(page, 'export-svg');
  expect(svg.name).toMatch(/\.timeline\.svg$/);
  expect(svg.bytes.toString('utf8')).toMatch(/^<svg[^>]*viewBox="0 0 1000 /);

  const png = await download(page, 'export-png');
  expect(png.name).toMatch(/\.timeline\.png$/);
  expect(png.bytes.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  expect(png.bytes.readUInt32BE(16)).toBe(2000); // width: 1000 × 2

  const csv = await download(page, 'export-csv');
  const lines = csv.bytes.toString('utf8').trim().split('\n');
  expect(lines.length).toBeGreaterThan(50);
});

test('the exported plan file is the CLI\'s, byte for byte but for the times and the link', async ({ page }) => {
  // one writer in core (core/src/report/plan_file.rs) for both front ends: the default view
  // (the default sample at batch 1, ge-block and greedy-size-best-fit, chosen in pane 2, at GE
  // defaults) against `memplan plan` with the same settings, run where the sample is so that
  // `input` is its name
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await packSecondPane(page);
  await expect(page.getByTestId('pane1-peak')).toBeVisible();
  const exported = (await download(page, 'export-json')).bytes.toString('utf8');
  const cli = memplan([
    'plan', 'mobilenet_v2_randinit.stripped.onnx', '--dim', 'batch=1',
    '--strategy', 'ge-block', '--strategy', 'greedy-size-best-fit', '--format', 'json',
  ], { cwd: 'static/samples' });
  expect(JSON.parse(exported).playground).toMatch(/^http/);
  const times = (s) => s.replace(/"plan_time_us": \d+/g, '"plan_time_us": 0');
  const withoutLink = exported.replace(/,\n  "playground": "[^"]*"\n}\n$/, '\n}\n');
  expect(times(withoutLink)).toBe(times(cli));
});

test('in a diff, the exported SVG carries the outlines of what moved and says against which pane', async ({ page }) => {
  // static/samples/tetris.csv (compare.spec): no-reuse vs greedy-size-best-fit, c..h move
  await page.goto('/?sample=tetris');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await page.getByTestId('pane0-strategy').selectOption('no-reuse');
  await page.getByTestId('pane1-strategy').selectOption('greedy-size-best-fit');
  await expect(page.getByTestId('pane1-peak')).toHaveAttribute('data-bytes', '64');
  const before = (await download(page, 'export-svg')).bytes.toString('utf8');
  // timeline.rs MOVED (light): the diff outline colour
  expect(before).not.toContain('stroke="#c2185b"');
  await page.getByTestId('compare-mode').selectOption('diff');
  await expect(page.getByTestId('diff-moved')).toHaveAttribute('data-moved', '6');
  const svg = (await download(page, 'export-svg')).bytes.toString('utf8');
  // six tensors moved: each outlined where pane 1 puts it and dashed where pane 2 does
  expect(svg.match(/stroke="#c2185b"/g)?.length).toBe(12);
  expect(svg.match(/stroke="#c2185b"[^>]*stroke-dasharray/g)?.length).toBe(6);
  expect(svg).toContain('diff against pane 2: 6 tensors moved');
  const png = await download(page, 'export-png');
  expect(png.bytes.subarray(0, 4)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
});

test('the tensors CSV neutralises cells a spreadsheet would run as formulas, and a BOM does not stop the import', async ({ page }) => {
  // a MiniMalloc CSV with a byte-order mark whose tensor names start with = + - @
  const names = ['=HYPERLINK("http://x")', '+1', '-x', '@SUM(A1)', 'plain'];
  const rows = ['id,lower,upper,size', ...names.map((n, i) => `"${n.replace(/"/g, '""')}",${i},${i + 2},${64 * (i + 1)}`)];
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await page.getByTestId('file').setInputFiles({ name: 'hostile.csv', mimeType: 'text/csv', buffer: Buffer.from('\ufeff' + rows.join('\n') + '\n') });
  await expect(page.locator('section.summary')).toContainText('hostile.csv');
  await expect(page.getByTestId('load-error')).toHaveCount(0);
  await expect(page.getByTestId('pane0-peak')).toBeVisible();
  const csv = (await download(page, 'export-csv')).bytes.toString('utf8');
  const first = csv.trim().split('\n').slice(1).map((l) => l.startsWith('"') ? l.slice(0, l.indexOf('",') + 1) : l.split(',')[0]);
  // web/src/export.rs csv_field: a leading quote mark, RFC 4180 quoting where needed
  expect(first.sort()).toEqual(["\"'=HYPERLINK(\"\"http://x\"\")\"", "'+1", "'-x", "'@SUM(A1)", 'plain'].sort());
});

test('the tensors CSV with gears gives every gear\'s tensors their planned sizes, not 0', async ({ page }) => {
  await page.goto('/?sample=resnet50');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await setGears(page, '1,2');
  await expect(page.getByTestId('gear')).toHaveValue('2');
  // the gear on screen is 2: gear 1's tensors are not drawn, but the export is the whole plan
  const csv = (await download(page, 'export-csv')).bytes.toString('utf8').trim().split('\n');
  const head = csv[0].split(',');
  expect(head).toEqual(['name', 'op', 'shape', 'dtype', 'bytes', 'planned_bytes', 'start', 'end', 'offset', 'gear']);
  // names here have no commas (ResNet-50's ONNX names): split is enough
  const rows = csv.slice(1).map((l) => l.split(','));
  const byGear = (g) => rows.filter((r) => r[9] === g);
  expect(byGear('1').length).toBeGreaterThan(50);
  expect(byGear('2').length).toBe(byGear('1').length);
  for (const r of [...byGear('1'), ...byGear('2')]) {
    expect(Number(r[5]), `planned bytes of ${r[0]}`).toBeGreaterThanOrEqual(Number(r[4]));
    expect(Number(r[4])).toBeGreaterThan(0);
  }
});

test('the exported SVG and PNG stand alone: axis names, the lower bound, the gear and a caption with a link', async ({ page }) => {
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await setGears(page, '1,2');
  await expect(page.getByTestId('gear')).toHaveValue('2');
  const svg = (await download(page, 'export-svg')).bytes.toString('utf8');
  const text = [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
  expect(text).toContain('op step →');
  expect(text).toContain('offset ↑');
  // the title names the model, the pane's strategy and the gear on screen
  expect(text.some((t) => t.includes('mobilenet_v2_randinit.stripped.onnx') && t.includes('ge-block') && t.includes('gear: batch 2'))).toBe(true);
  // the lower bound's line is labelled with the figure the pane gives
  const bound = text.find((t) => t.startsWith('lower bound '));
  expect(bound).toMatch(/^lower bound \d+(\.\d+)? [KMG]iB$/);
  const shown = await page.getByTestId('pane0').locator('.stat', { hasText: 'lower bound (planned sizes)' }).locator('dd .muted').textContent();
  expect(`lower bound ${shown.replace(/^ of /, '')}`).toBe(bound);
  // the caption: peak against the bound and a link that reopens this view
  const caption = text.find((t) => t.startsWith('memplan: peak '));
  expect(caption).toContain(`vs ${bound}`);
  const link = caption.match(/open in the playground: (\S+)/)[1].replace(/…$/, '');
  expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/.*#v=1/);
  // the PNG is the same picture, caption included, at twice the size
  const h = Number(svg.match(/viewBox="0 0 1000 (\d+(\.\d+)?)"/)[1]);
  const png = (await download(page, 'export-png')).bytes;
  expect(png.readUInt32BE(16)).toBe(2000);
  expect(png.readUInt32BE(20)).toBe(Math.round(h * 2));
});

test('under a memory budget the exact search plans the same in the page as in the CLI', async ({ page }) => {
  // core's report::analysis decides once that the budget reaches the strategy: `optimal`
  // stops at the first plan under it in both front ends (MiniMalloc's capacity mode), so the
  // page's plan file is `memplan plan --capacity`'s. e2e/fixtures/budget-stops-search.csv
  // (8 buffers, found by a random search): lower bound 16 B, the optimum 16 B, the best seed
  // heuristic 17 B; under a 17 B budget the search stops at the seed, 17 B, "not proven
  // optimal" (without the budget it proves 16 B).
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await page.getByTestId('file').setInputFiles(join(root, 'e2e/fixtures/budget-stops-search.csv'));
  await expect(page.getByTestId('model-name')).toContainText('budget-stops-search');
  await page.getByTestId('pane0-strategy').selectOption('optimal');
  await page.getByTestId('pane1-strategy').selectOption('greedy-size-best-fit');
  await expect(page.getByTestId('pane0-peak')).toHaveAttribute('data-bytes', '16');
  await page.getByTestId('budget').fill('17');
  await page.getByTestId('budget').press('Enter');
  await expect(page.getByTestId('pane0-peak')).toHaveAttribute('data-bytes', '17');
  await expect(page.getByTestId('pane1-peak')).toHaveAttribute('data-bytes', '17');
  const exported = (await download(page, 'export-json')).bytes.toString('utf8');
  const cli = memplan([
    'plan', 'budget-stops-search.csv', '--strategy', 'optimal', '--strategy', 'greedy-size-best-fit',
    '--capacity', '17', '--format', 'json',
  ], { cwd: 'e2e/fixtures' });
  const times = (s) => s.replace(/"plan_time_us": \d+/g, '"plan_time_us": 0');
  const withoutLink = exported.replace(/,\n  "playground": "[^"]*"\n}\n$/, '\n}\n');
  expect(times(withoutLink)).toBe(times(cli));
});
