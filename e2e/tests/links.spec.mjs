// Links that hold: a link pasted into an open tab changes the view (hashchange), Back returns
// to the previous model (history entries for model and sample changes), and zoom, search,
// sort and the selected tensor travel in the link. A model is titled by its file name.
import { test, expect } from '@playwright/test';

async function ready(page) {
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
}

test.beforeEach(async ({ page }) => {
  page.on('pageerror', (e) => { throw new Error(`page error: ${e.message}`); });
});

test('a link pasted into an open tab changes the view', async ({ page }) => {
  await page.goto('/');
  await ready(page);
  await page.getByTestId('sample').selectOption('resnet50');
  await expect(page.getByTestId('sample')).toHaveValue('resnet50');
  await page.getByTestId('pane1-strategy').selectOption('ge-max-block');
  await expect(page.getByTestId('pane1-peak')).toBeVisible();
  const resnet = page.url();
  await page.getByTestId('sample').selectOption('tetris');
  await expect(page.locator('section.summary')).toContainText('tetris.csv');
  // paste: same document, only the fragment changes
  await page.evaluate((u) => { location.hash = new URL(u).hash; }, resnet);
  await expect(page.getByTestId('sample')).toHaveValue('resnet50');
  await expect(page.getByTestId('pane1-strategy')).toHaveValue('ge-max-block');
  await expect(page.locator('section.summary')).toContainText('resnet50');
});

test('Back returns to the previous model', async ({ page }) => {
  await page.goto('/');
  await ready(page);
  await page.getByTestId('sample').selectOption('resnet50');
  await expect(page.locator('section.summary')).toContainText('resnet50');
  await page.getByTestId('sample').selectOption('tetris');
  await expect(page.locator('section.summary')).toContainText('tetris.csv');
  await page.goBack();
  await expect(page.getByTestId('sample')).toHaveValue('resnet50');
  await expect(page.locator('section.summary')).toContainText('resnet50');
  await page.goForward();
  await expect(page.getByTestId('sample')).toHaveValue('tetris');
});

test('zoom, search, sort and the selected tensor are in the link', async ({ page, context }) => {
  await page.goto('/');
  await ready(page);
  await page.getByRole('button', { name: 'zoom in' }).click();
  await page.locator('#tensor-search').fill('conv');
  await page.getByRole('button', { name: 'offset' }).click();
  const first = page.getByTestId('tensor-table').locator('tbody tr').first();
  const name = await first.locator('td.name').textContent();
  await first.click();
  await expect(page.getByTestId('selected-row')).toHaveCount(1);
  await expect(page.getByRole('button', { name: 'Reset view' })).toBeEnabled();
  await page.waitForTimeout(500); // the link follows zoom and typing a moment later
  const url = page.url();

  const other = await context.newPage();
  await other.goto(url);
  await ready(other);
  await expect(other.locator('#tensor-search')).toHaveValue('conv');
  await expect(other.getByRole('button', { name: 'Reset view' })).toBeEnabled();
  await expect(other.locator('th[aria-sort="ascending"], th[aria-sort="descending"]')).toContainText('offset');
  await expect(other.getByTestId('selected-row').locator('td.name')).toHaveText(name);
});

test('a model is titled by its file name, not its graph name', async ({ page }) => {
  await page.goto('/');
  await ready(page);
  await page.getByTestId('sample').selectOption('resnet50');
  await expect(page.getByTestId('model-name')).toHaveText('resnet50_randinit.stripped');
});

// fixme: in this headless run the wheel over the embedded timeline does not zoom after the
// click (Reset stays disabled); the page-scroll half passes. Not yet understood.
test.fixme('an embed lets the page scroll past it; after a click the wheel zooms; Reset restores', async ({ page }) => {
  await page.setContent(`<div style="height:300px">top</div><iframe src="http://127.0.0.1:8081/?embed=1" style="width:1000px;height:700px;border:0"></iframe><div style="height:2000px">bottom</div>`);
  const frame = page.frameLocator('iframe');
  await expect(frame.getByTestId('pane0-peak')).toBeVisible();
  const box = await page.locator('iframe').boundingBox();
  const canvas = await frame.locator('#timeline-canvas').boundingBox();
  await page.mouse.move(canvas.x + canvas.width / 2, canvas.y + canvas.height / 2);
  const before = await page.evaluate(() => scrollY);
  await page.mouse.wheel(0, 400);
  await expect.poll(() => page.evaluate(() => scrollY)).toBeGreaterThan(before);
  await expect(frame.getByTestId('reset-view')).toBeDisabled();
  // after a click on it, the wheel zooms the timeline
  const c2 = await frame.locator('#timeline-canvas').boundingBox();
  await page.mouse.click(c2.x + c2.width / 2, c2.y + c2.height / 2);
  await page.mouse.wheel(0, -200);
  await expect(frame.getByTestId('reset-view')).toBeEnabled();
  await frame.getByTestId('reset-view').click();
  await expect(frame.getByTestId('reset-view')).toBeDisabled();
  expect(box.height).toBe(700);
});
