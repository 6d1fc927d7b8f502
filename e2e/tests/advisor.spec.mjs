// The Advisor panel shows, for the open model, the rows `memplan advise` prints: the same peaks
// and savings, sorted by saving, and a row the page can show opens a pane that plans to its peak.
//
// Expected figures obtained once with the CLI of this checkout and hard-coded (independent of the
// page's code path):
//   cargo run -q -p memplan-cli -- advise static/samples/mobilenet_v2_randinit.stripped.onnx --dim batch=1 --format json
//   cargo run -q -p memplan-cli -- advise static/samples/mobilenet-v2-blocks.json --dim batch=1 --format json
// Both give baseline 10,241,536 B (--strategy portfolio) and, among others:
//   all combined            6,021,120 B  saving 4,220,416 B (41.2 %)  --fuse activation --padding none --io-reuse
//   fuse activation         6,628,864 B  saving 3,612,672 B (35.3 %)
//   graph I/O in the arena  9,634,816 B  saving   606,720 B  (5.9 %)  --io-reuse
//   padding none           10,240,000 B  saving     1,536 B  (0.0 %)  --padding none
import { test, expect } from '@playwright/test';

const BASELINE = 10241536;

async function openAdvisor(page) {
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  const panel = page.getByTestId('advisor');
  // nothing is computed before the panel is opened (first paint is not blocked)
  await expect(panel.getByTestId('advisor-row')).toHaveCount(0);
  await panel.locator('summary').click();
  await expect(page.getByTestId('advisor-baseline')).toHaveAttribute('data-peak', String(BASELINE));
  return panel;
}

function row(page, lever) {
  return page.locator(`[data-testid="advisor-row"][data-lever="${lever}"]`);
}

test('the default sample: the advisor shows the CLI rows, sorted by saving, and opens one in a pane', async ({ page }) => {
  await page.goto('/');
  await openAdvisor(page);
  const rows = page.getByTestId('advisor-row');
  await expect(rows.first()).toHaveAttribute('data-lever', 'all combined');
  await expect(rows.first()).toHaveAttribute('data-peak', '6021120');
  await expect(rows.first()).toHaveAttribute('data-saving', '4220416');
  const savings = await rows.evaluateAll((rs) => rs.map((r) => Number(r.dataset.saving)));
  expect(savings).toEqual([...savings].sort((a, b) => b - a));
  const io = row(page, 'graph I/O in the arena');
  await expect(io).toHaveAttribute('data-peak', '9634816');
  await expect(io).toHaveAttribute('data-saving', '606720');
  await expect(io).toContainText('5.9 %');
  // the row opens a third pane with its settings (portfolio, graph I/O in the arena) and that
  // pane plans to the row's peak
  await io.getByTestId('advisor-open').click();
  await expect(page.getByTestId('pane2-peak')).toHaveAttribute('data-bytes', '9634816');
  await expect(page.getByTestId('pane2-strategy')).toHaveValue('portfolio');
  await page.screenshot({ path: 'test-results/advisor-default.png', fullPage: true });
});

test('a JSON sample: fusion has no page control, so its row names the CLI flags', async ({ page }) => {
  await page.goto('/?sample=mobilenet-v2-blocks');
  await openAdvisor(page);
  const fuse = row(page, 'fuse activation');
  await expect(fuse).toHaveAttribute('data-peak', '6628864');
  await expect(fuse).toHaveAttribute('data-saving', '3612672');
  await expect(fuse).toContainText('35.3 %');
  await expect(fuse.getByTestId('advisor-open')).toHaveCount(0);
  await expect(fuse).toContainText('memplan plan mobilenet-v2-blocks.json --strategy portfolio --fuse activation');
  const pad = row(page, 'padding none');
  await expect(pad).toHaveAttribute('data-peak', '10240000');
  await pad.getByTestId('advisor-open').click();
  await expect(page.getByTestId('pane2-peak')).toHaveAttribute('data-bytes', '10240000');
});
