// A large trace stays interactive: the boxes are painted once on a canvas and pointer moves
// only redraw the overlay (no repaint, no rebuilt picture); when settings change quickly only
// the latest are planned. Timings are the benchmark's business (bench.mjs), not asserted here.
import { test, expect } from '@playwright/test';
import { trace } from '../traces.mjs';

test.beforeEach(async ({ page }) => {
  page.on('pageerror', (e) => { throw new Error(`page error: ${e.message}`); });
});

async function openTrace(page, n) {
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await page.getByTestId('file').setInputFiles({ name: `trace-${n}.csv`, mimeType: 'text/csv', buffer: Buffer.from(trace(n)) });
  await expect(page.locator('section.summary')).toContainText(`trace-${n}.csv`);
  await expect(page.getByTestId('pane0-peak')).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId('pane1-peak')).toBeVisible({ timeout: 60_000 });
}

test('hovering a 28k-buffer timeline redraws the overlay, not the picture', async ({ page }) => {
  test.setTimeout(120_000);
  await openTrace(page, 28_000);
  const canvas = page.locator('#timeline-canvas[data-largest]');
  await canvas.scrollIntoViewIfNeeded();
  const paints = await canvas.getAttribute('data-paints');
  const c = await canvas.evaluate((el) => {
    const [x, y] = el.dataset.largest.split(',').map(Number);
    const b = el.getBoundingClientRect();
    return { x: b.x + (x / 1000) * b.width, y: b.y + (y / 1000) * b.width };
  });
  for (const dx of [-6, -3, 0]) await page.mouse.move(c.x + dx, c.y);
  await expect(page.getByTestId('tooltip')).toBeVisible();
  await expect(page.locator('svg.overlay rect')).not.toHaveCount(0);
  await page.mouse.click(c.x, c.y);
  await expect(page.getByTestId('step')).toBeVisible();
  expect(await canvas.getAttribute('data-paints')).toBe(paints);
  // zooming is a new picture
  await page.getByRole('button', { name: 'zoom in' }).click();
  await expect(canvas).not.toHaveAttribute('data-paints', paints);
});

test('changing settings quickly plans only the latest', async ({ page }) => {
  test.setTimeout(120_000);
  await openTrace(page, 18_000);
  const done = Number(await page.locator('html').getAttribute('data-worker-done'));
  // the exact solver runs to its 2 s limit on this trace: four changes within that time
  await page.getByTestId('pane1-strategy').selectOption('optimal');
  for (const a of ['64', '128', '256']) await page.getByTestId('pane1-align').selectOption(a);
  await expect(page.getByTestId('pane1-peak')).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId('pane1-strategy')).toHaveValue('optimal');
  // one answer for the four changes: the earlier jobs were stopped, not finished
  expect(Number(await page.locator('html').getAttribute('data-worker-done'))).toBe(done + 1);
});

test('the tensor table renders the rows near its scroll position, and scrolling reaches the rest', async ({ page }) => {
  // 200 tensors all live at step 0, sizes 1..200 KiB: sorted by planned size (the default,
  // largest first) row k holds t(199 − k)
  const rows = ['id,lower,upper,size'];
  for (let i = 0; i < 200; i++) rows.push(`t${i},0,2,${(i + 1) * 1024}`);
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await page.getByTestId('file').setInputFiles({ name: 'wide.csv', mimeType: 'text/csv', buffer: Buffer.from(rows.join('\n') + '\n') });
  await expect(page.locator('section.summary')).toContainText('wide.csv');
  await page.getByRole('button', { name: 'Peak step' }).click();
  const table = page.getByTestId('tensor-table');
  await expect(page.locator('section.table')).toContainText('200 tensors');
  const body = table.locator('tbody tr:not(.spacer)');
  // 60 rows in the page (views.rs TABLE_WINDOW); one spacer of 140 rows × 22 px below them
  await expect(body).toHaveCount(60);
  await expect(body.first().locator('td.name')).toHaveText('t199');
  await expect(table.locator('tr.spacer')).toHaveCount(1);
  expect(await table.locator('tr.spacer').evaluate((e) => e.getBoundingClientRect().height)).toBe(140 * 22);
  // scrolled to the bottom: the last rows are there, the first ones are spacer
  await page.locator('section.table .scroll').evaluate((e) => { e.scrollTop = e.scrollHeight; });
  await expect(body.last().locator('td.name')).toHaveText('t0');
  // and inside the scroll box's visible part
  const seen = await page.locator('section.table .scroll').evaluate((box) => {
    const b = box.getBoundingClientRect();
    const rs = [...box.querySelectorAll('tbody tr:not(.spacer)')];
    const r = rs[rs.length - 1].getBoundingClientRect();
    return r.top >= b.top && r.bottom <= b.bottom + 1;
  });
  expect(seen).toBe(true);
  expect(await body.count()).toBeLessThanOrEqual(60);
});

test('a link selecting a tensor far down the table opens with the table scrolled to its row', async ({ page, context }) => {
  // 200 tensors live at step 0, sizes 1..200 KiB
  const rows = ['id,lower,upper,size'];
  for (let i = 0; i < 200; i++) rows.push(`t${i},0,2,${(i + 1) * 1024}`);
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await page.getByTestId('file').setInputFiles({ name: 'wide.csv', mimeType: 'text/csv', buffer: Buffer.from(rows.join('\n') + '\n') });
  await expect(page.locator('section.summary')).toContainText('wide.csv');
  const body = (p) => p.getByTestId('tensor-table').locator('tbody tr:not(.spacer)');
  // smallest first: select t0, then sort largest first: t0 is row 200, far past the 60 rendered
  await page.getByRole('button', { name: 'planned' }).click();
  await expect(body(page).first().locator('td.name')).toHaveText('t0');
  await body(page).first().click();
  await page.getByRole('button', { name: 'planned' }).click();
  await expect(body(page).first().locator('td.name')).toHaveText('t199');
  await expect(page.getByTestId('selected-row')).toHaveCount(0);
  await page.waitForTimeout(400);

  const other = await context.newPage();
  await other.goto(page.url());
  await expect(other.locator('html[data-ready]')).toHaveCount(1);
  const sel = other.getByTestId('selected-row');
  await expect(sel.locator('td.name')).toHaveText('t0');
  const seen = await other.locator('#tensor-scroll').evaluate((box) => {
    const b = box.getBoundingClientRect();
    const r = box.querySelector('[data-testid=selected-row]').getBoundingClientRect();
    return r.top >= b.top && r.bottom <= b.bottom + 1;
  });
  expect(seen).toBe(true);
});
