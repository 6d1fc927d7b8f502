// Screenshots of the main views compared against committed baselines (screens.spec.mjs-snapshots/,
// made on this machine's Chromium with `npx playwright test screens.spec.mjs --update-snapshots`):
// a few pixels' tolerance, planning times masked (they vary run to run).
import { test, expect } from '@playwright/test';

const opts = (page) => ({
  fullPage: true,
  maxDiffPixels: 200,
  animations: 'disabled',
  mask: [page.locator('[data-testid$="-time"]')],
});

test.beforeEach(async ({ page }) => {
  page.on('pageerror', (e) => { throw new Error(`page error: ${e.message}`); });
});

test('the main view', async ({ page }) => {
  await page.goto('/?theme=light');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await expect(page.locator('#timeline-canvas[data-paints]')).toHaveCount(1);
  await expect(page).toHaveScreenshot('main-light.png', opts(page));
});

test('the dark theme', async ({ page }) => {
  await page.goto('/?theme=dark');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await expect(page.locator('#timeline-canvas[data-paints]')).toHaveCount(1);
  await expect(page).toHaveScreenshot('main-dark.png', opts(page));
});

test('the embed view', async ({ page }) => {
  await page.goto('/?embed=1&theme=light');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await expect(page.locator('#timeline-canvas[data-paints]')).toHaveCount(1);
  await expect(page).toHaveScreenshot('embed.png', opts(page));
});

test('on a phone the tensor table scrolls sideways and keeps the names in view', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/?theme=light');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  const box = page.locator('section.table .scroll');
  // wider than the screen, inside its own box: the page itself does not scroll sideways
  const w = await box.evaluate((e) => ({ client: e.clientWidth, scroll: e.scrollWidth, page: document.documentElement.scrollWidth }));
  expect(w.scroll).toBeGreaterThan(w.client);
  expect(w.page).toBe(390);
  await expect(page.locator('.swipe-hint')).toBeVisible();
  await expect(page.locator('section.table')).toHaveScreenshot('phone-table.png', { maxDiffPixels: 200, animations: 'disabled' });
  // scrolled to the right end: the offset column is in the box, the first name stays at its left
  await box.evaluate((e) => { e.scrollLeft = e.scrollWidth; });
  const pos = await box.evaluate((e) => {
    const b = e.getBoundingClientRect();
    const name = e.querySelector('tbody td.name').getBoundingClientRect();
    const offset = [...e.querySelectorAll('thead th')].find((t) => t.textContent.startsWith('offset')).getBoundingClientRect();
    return { nameLeft: name.left - b.left, offsetRight: offset.right - b.right };
  });
  expect(Math.abs(pos.nameLeft)).toBeLessThan(1);
  expect(pos.offsetRight).toBeLessThanOrEqual(1);
  await expect(page.locator('section.table')).toHaveScreenshot('phone-table-scrolled.png', { maxDiffPixels: 200, animations: 'disabled' });
});

test('on a phone the timeline comes before the panes and its labels stay legible', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/?theme=light');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  const canvas = page.locator('#timeline-canvas[data-paints]');
  await expect(canvas).toHaveCount(1);
  const top = (sel) => page.locator(sel).first().evaluate((e) => e.getBoundingClientRect().top + window.scrollY);
  // the picture first, then the panes' settings and figures, then the table
  expect(await top('section.plots')).toBeLessThan(await top('[data-testid=pane0]'));
  expect(await top('[data-testid=pane0]')).toBeLessThan(await top('section.table'));
  // in the document too, so Tab reaches the timeline before the panes' fields
  const before = (a, b) => page.evaluate(([a, b]) =>
    Boolean(document.querySelector(a).compareDocumentPosition(document.querySelector(b)) & Node.DOCUMENT_POSITION_FOLLOWING), [a, b]);
  expect(await before('section.plots', 'section.panes')).toBe(true);
  // labels at 10 CSS px or more (the desktop's 11 user units would be under 4 px here)
  expect(Number(await canvas.getAttribute('data-font-px'))).toBeGreaterThanOrEqual(9.9);
  const curveFont = await page.getByTestId('curve').locator('svg').first().evaluate((svg) => {
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    return Number(svg.getAttribute('font-size')) * scale;
  });
  expect(curveFont).toBeGreaterThanOrEqual(9.9);
  await expect(page.locator('section.plots')).toHaveScreenshot('phone-timeline.png', { maxDiffPixels: 200, animations: 'disabled' });
  // turned into a desktop window: the panes come first again, the canvas painted
  await page.setViewportSize({ width: 1280, height: 900 });
  await expect.poll(() => before('section.panes', 'section.plots')).toBe(true);
  await expect(page.locator('#timeline-canvas[data-paints]')).toHaveCount(1);
  // painted again at the new width: the desktop's text scale 1
  const wide = page.locator('#timeline-canvas');
  await expect.poll(async () => {
    const w = await wide.evaluate((e) => e.clientWidth);
    return Math.abs(Number(await wide.getAttribute('data-font-px')) - (11 * w) / 1000);
  }).toBeLessThan(0.05);
});

test('on a desktop the timeline labels keep their size', async ({ page }) => {
  await page.goto('/?theme=light');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  const canvas = page.locator('#timeline-canvas[data-paints]');
  await expect(canvas).toHaveCount(1);
  const px = Number(await canvas.getAttribute('data-font-px'));
  const w = await canvas.evaluate((e) => e.clientWidth);
  expect(px).toBeCloseTo((11 * w) / 1000, 1);
});
