// The compare view: other panes' timelines on one shared step axis and one shared byte axis,
// and a diff that outlines the tensors two panes place at different offsets. Both travel in
// the link. Numbers by hand on static/samples/tetris.csv (see analysis.rs
// moved_lists_the_tensors_two_plans_place_apart): no-reuse puts a..h at the running sums
// 0 32 48 64 96 112 160 176 (arena 208 B); greedy-size-best-fit at 0 32 32 0 48 0 48 0 (peak
// 64 B): c, d, e, f, g and h move, a and b stay.
import { test, expect } from '@playwright/test';
import { setGears } from './page.mjs';

test.beforeEach(async ({ page }) => {
  page.on('pageerror', (e) => { throw new Error(`page error: ${e.message}`); });
});

async function tetris(page) {
  await page.goto('/?sample=tetris');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await page.getByTestId('pane0-strategy').selectOption('no-reuse');
  await page.getByTestId('pane1-strategy').selectOption('greedy-size-best-fit');
  await expect(page.getByTestId('pane0-peak')).toHaveAttribute('data-bytes', '208');
  await expect(page.getByTestId('pane1-peak')).toHaveAttribute('data-bytes', '64');
}

test('side by side: every pane on the same axes, up to the largest peak', async ({ page }) => {
  await tetris(page);
  // focus the smaller plan: its own axes would stop at 64 B × 1.04
  await page.getByTestId('pane1').getByRole('button', { name: 'show below' }).click();
  await page.getByTestId('compare-mode').selectOption('side');
  const side = page.getByTestId('compare-side');
  // one byte axis for both: 208 B (pane 1's peak) × 1.04 = 216.32
  await expect(side).toHaveAttribute('data-y-max', '216');
  await expect(page.getByTestId('compare-pane0')).toHaveAttribute('data-peak', '208');
  await expect(page.getByTestId('compare-note')).toContainText('Shared axes: steps 0–16, bytes 0 B–216 B');
  // the other pane's picture is painted on its own canvas, as wide as the main one
  await expect(page.locator('#compare-canvas-0')).toHaveAttribute('data-paints', /\d+/);
  const [a, b] = await Promise.all(['#timeline-canvas', '#compare-canvas-0'].map((s) => page.locator(s).boundingBox()));
  expect(Math.round(b.width)).toBe(Math.round(a.width));
  await page.locator('section.plots').screenshot({ path: '/tmp/webshots/compare-side.png' });
  // back to one pane: its own axes
  await page.getByTestId('compare-mode').selectOption('off');
  await expect(side).toHaveCount(0);
});

test('diff: the tensors placed elsewhere are counted and named, and the link keeps the view', async ({ page, context }) => {
  await tetris(page);
  await page.getByTestId('compare-mode').selectOption('diff');
  await expect(page.getByTestId('compare-with')).toHaveValue('1');
  const note = page.getByTestId('diff-moved');
  await expect(note).toHaveAttribute('data-moved', '6');
  await expect(note).toContainText('6 of 8 tensors are at another offset than in pane 2');
  await expect(note).toContainText(': c, d, e, f, g and 1 more.');
  await page.locator('section.plots').screenshot({ path: '/tmp/webshots/compare-diff.png' });
  // the same plan on both sides: nothing moved
  await page.getByTestId('pane1-strategy').selectOption('no-reuse');
  await expect(note).toHaveAttribute('data-moved', '0');
  await page.getByTestId('pane1-strategy').selectOption('greedy-size-best-fit');
  await expect(note).toHaveAttribute('data-moved', '6');

  const other = await context.newPage();
  await other.goto(page.url());
  await expect(other.locator('html[data-ready]')).toHaveCount(1);
  await expect(other.getByTestId('compare-mode')).toHaveValue('diff');
  await expect(other.getByTestId('diff-moved')).toHaveAttribute('data-moved', '6');
});

test('the summary gives the planned no-reuse total and padding waste once when every pane agrees', async ({ page }) => {
  await tetris(page);
  // exact sizes (a CSV: alignment 1, no padding) in both panes: raw sum 32+16+16+32+16+48+16+32
  const line = page.getByTestId('planned-sizes');
  await expect(line).toHaveAttribute('data-no-reuse', '208');
  await expect(line).toHaveAttribute('data-padding', '0');
  await expect(line).toContainText('the same in every pane');
  // pane 2 at 64 B alignment: every tensor (16, 32 or 48 B) becomes 64 B: 8 × 64 = 512, 304 over
  await page.getByTestId('pane1-align').selectOption('64');
  await expect(line).toContainText('pane 1: no-reuse 208 B, padding waste 0 B · pane 2: no-reuse 512 B, padding waste 304 B');
});

test('removing the pane a diff compares against ends the compare view and its note', async ({ page }) => {
  await tetris(page);
  await page.getByTestId('compare-mode').selectOption('diff');
  await expect(page.getByTestId('diff-moved')).toHaveAttribute('data-moved', '6');
  // three panes by default: remove panes 3 and 2, one pane is left
  for (const n of [3, 2]) {
    if (await page.getByRole('button', { name: `remove pane ${n}` }).count()) {
      await page.getByRole('button', { name: `remove pane ${n}` }).click();
    }
  }
  await expect(page.getByTestId('pane1')).toHaveCount(0);
  await expect(page.getByTestId('diff-moved')).toHaveCount(0);
  await expect(page.getByTestId('compare-note')).toHaveCount(0);
  await expect(page.getByTestId('compare-mode')).toHaveCount(0);
});

test('with gears, the compare view draws every pane at the gear shown, not its whole plan', async ({ page }) => {
  await page.goto('/?sample=resnet50');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await setGears(page, '1,2');
  await expect(page.getByTestId('gear')).toHaveValue('2');
  await page.getByTestId('compare-mode').selectOption('side');
  const other = page.getByTestId('compare-pane1');
  const live = async (loc) => Number(await loc.getAttribute('data-live-peak'));
  await expect(other).toHaveAttribute('data-live-peak', /^[1-9]\d*$/);
  const atTwo = await live(other);
  await page.getByTestId('gear').selectOption('1');
  await expect(other).not.toHaveAttribute('data-live-peak', String(atTwo));
  const atOne = await live(other);
  // ResNet-50's activations all carry the batch: gear 1 holds fewer bytes than gear 2
  expect(atOne).toBeLessThan(atTwo);
  // the same figure as pane 2's own timeline at gear 1
  await page.getByTestId('compare-mode').selectOption('off');
  await page.getByTestId('pane1').getByRole('button', { name: 'show below' }).click();
  await expect(page.getByTestId('gear')).toHaveValue('1');
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-live-peak', String(atOne));
  await page.getByTestId('gear').selectOption('2');
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-live-peak', String(atTwo));
});
