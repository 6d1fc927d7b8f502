// Explain the gap: each pane splits its peak's distance to the lower bound into parts that add
// up (computed by the core's explain module), says it in one sentence, and shows its
// strategy's one-line description under the selector; hovering a GE tensor names its block.
import { test, expect } from '@playwright/test';
import { memplan } from './memplan.mjs';
import { largestBox } from './canvas.mjs';

test.beforeEach(async ({ page }) => {
  page.on('pageerror', (e) => { throw new Error(`page error: ${e.message}`); });
});

test('each pane explains its gap to the lower bound, parts adding up', async ({ page }) => {
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  for (const i of [0, 1]) {
    const gap = page.getByTestId(`pane${i}-gap`);
    await expect(gap).toBeVisible();
    const total = Number(await gap.getAttribute('data-total'));
    expect(total).toBeGreaterThan(0);
    expect(Number(await gap.getAttribute('data-parts'))).toBe(total);
    // the stacked segments add up to the same bytes
    const segs = await gap.locator('.seg').evaluateAll((els) => els.map((e) => Number(e.dataset.bytes)));
    expect(segs.reduce((a, b) => a + b, 0)).toBe(total);
    await expect(page.getByTestId(`pane${i}-gap-sentence`)).toContainText('more than the lower bound');
    await expect(page.getByTestId(`pane${i}-summary`)).not.toBeEmpty();
  }
  // on MobileNetV2, GE's arena at its busiest step is mostly blocks none of whose tensors is
  // live then (core explain: 642 KiB of the 643 KiB gap)
  await expect(page.getByTestId('pane0-gap-sentence')).toContainText('ge-block');
  await expect(page.getByTestId('pane0-gap')).toContainText('idle arena');
});

test('hovering a tensor of a GE plan names its block', async ({ page }) => {
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  // pane 2 (GE's runtime allocator) plans in the worker after the page is ready, and its
  // figures make the panes taller: measure the timeline once it is in, not before it moves
  await expect(page.getByTestId('pane1-peak')).toBeVisible();
  const canvas = page.locator('#timeline-canvas[data-largest]');
  await canvas.scrollIntoViewIfNeeded();
  const c = await largestBox(canvas);
  await page.mouse.move(c.x - 4, c.y);
  await page.mouse.move(c.x, c.y);
  await expect(page.getByTestId('tooltip-block')).toContainText(/members · level/);
});

test("each strategy's description under its selector is the CLI's (`memplan strategies`)", async ({ page }) => {
  // `memplan strategies`: one line per strategy, its name, spaces, its one-line description
  const cli = memplan(['strategies']).trim().split('\n').map((l) => {
    const m = l.match(/^(\S+)\s+(.+)$/);
    return { name: m[1], summary: m[2] };
  });
  expect(cli.length).toBeGreaterThanOrEqual(10);
  expect(cli.map((s) => s.name)).toContain('ge-block');
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  const options = await page.getByTestId('pane1-strategy').locator('option').allTextContents();
  for (const { name, summary } of cli) {
    expect(options).toContain(name);
    await page.getByTestId('pane1-strategy').selectOption(name);
    await expect(page.getByTestId('pane1-summary')).toHaveText(summary);
    await expect(page.getByTestId('pane1-summary')).toBeVisible();
  }
});
