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
