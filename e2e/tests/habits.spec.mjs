// Habits of a careful form and dialog: an input keeps what was typed and says under the field
// why it did not take it, until fixed; the Embed dialog keeps Tab inside it; and the planning
// worker's script and wasm are only fetched when a plan needs them.
import { test, expect } from '@playwright/test';
import { setGears } from './page.mjs';

async function ready(page) {
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
}

test.beforeEach(async ({ page }) => {
  page.on('pageerror', (e) => { throw new Error(`page error: ${e.message}`); });
});

test('an input keeps what was typed and shows the error under the field until it is fixed', async ({ page }) => {
  await page.goto('/');
  await ready(page);
  await expect(page.getByTestId('pane0-peak')).toBeVisible();
  const cases = [
    // [field, bad text, what the error says, a good text]
    ['dim-batch', '0', "'batch' must be a whole number from 1 to", '2'],
    ['gears', '1,x', "gear 'x' is not a batch size", ''],
    ['sizes', 'y', "tensor size 'y': expected NAME=BYTES", ''],
    ['budget', '12 lots', 'memory budget', '200MiB'],
  ];
  for (const [id, bad, says, good] of cases) {
    const input = page.getByTestId(id);
    await input.fill(bad);
    await input.dispatchEvent('change');
    const error = page.getByTestId(`${id}-error`);
    await expect(error).toContainText(says);
    // the text stays in the field, which names the error as its description
    await expect(input).toHaveValue(bad);
    await expect(input).toHaveAttribute('aria-invalid', 'true');
    const described = await input.getAttribute('aria-describedby');
    expect(described).toBeTruthy();
    await expect(page.locator(`#${described}`)).toHaveText(await error.innerText());
    // under the field: below the input, not beside it or in the banner at the top
    const [ib, eb] = [await input.boundingBox(), await error.boundingBox()];
    expect(eb.y).toBeGreaterThanOrEqual(ib.y + ib.height - 1);
    // another field's change leaves it alone
    if (id !== 'budget') {
      await page.getByTestId('budget').fill('');
      await page.getByTestId('budget').dispatchEvent('change');
      await expect(input).toHaveValue(bad);
      await expect(error).toContainText(says);
    }
    await input.fill(good);
    await input.dispatchEvent('change');
    await expect(error).toHaveCount(0);
    await expect(input).not.toHaveAttribute('aria-invalid', 'true');
    await expect(input).not.toHaveAttribute('aria-describedby', /./);
    await expect(page.getByTestId('notice')).toHaveCount(0);
  }
  await expect(page.getByTestId('dim-batch')).toHaveValue('2');
  await expect(page.getByTestId('budget')).toHaveValue('200 MiB');
  await expect(page.getByTestId('pane0-peak')).toBeVisible();
});

test('the Embed dialog keeps Tab and Shift+Tab inside it', async ({ page }) => {
  await page.goto('/');
  await ready(page);
  await page.getByTestId('embed').click();
  const dialog = page.getByTestId('embed-dialog');
  await expect(dialog).toBeVisible();
  await expect(page.getByTestId('embed-copy')).toBeFocused();
  const close = page.getByRole('button', { name: 'Close', exact: true });
  const text = page.getByTestId('embed-snippet');
  const inside = () => page.evaluate(() => !!document.activeElement?.closest('[data-testid=embed-dialog]'));
  await page.keyboard.press('Tab');
  await expect(close).toBeFocused();
  // past the last element: back to the first, not to the page behind
  await page.keyboard.press('Tab');
  await expect(text).toBeFocused();
  await page.keyboard.press('Tab');
  await expect(page.getByTestId('embed-copy')).toBeFocused();
  await page.keyboard.press('Shift+Tab');
  await expect(text).toBeFocused();
  // before the first: to the last
  await page.keyboard.press('Shift+Tab');
  await expect(close).toBeFocused();
  for (let i = 0; i < 7; i++) {
    await page.keyboard.press(i % 3 === 2 ? 'Shift+Tab' : 'Tab');
    expect(await inside()).toBe(true);
  }
  // a click on the dialog's text, then Tab: still inside
  await dialog.locator('h2').click();
  await page.keyboard.press('Tab');
  expect(await inside()).toBe(true);
  await page.keyboard.press('Escape');
  await expect(dialog).toHaveCount(0);
});

test('the planning worker is fetched only when a plan needs it', async ({ page }) => {
  const fetched = [];
  page.on('request', (r) => { if (/plan_worker/.test(r.url())) fetched.push(new URL(r.url()).pathname); });
  // a buffer list's panes (ge-block, a plain packing) plan on the page (small, neither
  // anytime nor a runtime simulation); a graph's open with GE's runtime allocator, which
  // fetches the worker at once
  await page.goto('/?sample=tetris');
  await ready(page);
  await expect(page.getByTestId('pane0-peak')).toBeVisible();
  await expect(page.getByTestId('pane1-peak')).toBeVisible();
  await page.waitForTimeout(500);
  expect(fetched).toEqual([]);
  // a runtime allocator's simulation runs in the worker: now it is fetched
  await page.getByTestId('add-pane').click();
  await page.getByTestId('pane2-strategy').selectOption('runtime-bfc');
  await expect(page.getByTestId('pane2-peak')).toBeVisible();
  expect(fetched).toContain('/plan_worker.js');
  expect(fetched.some((p) => /^\/plan_worker_bg\.wasm$/.test(p))).toBe(true);
});

test('a tensor size naming no tensor of the model leaves the model, its gears and the link standing', async ({ page, context }) => {
  // found by a new user's try: the model vanished with the form to fix it, the gears were
  // blamed and dropped, and the link it left opened nothing
  await page.goto('/');
  await ready(page);
  await setGears(page, '1,2');
  await expect(page.getByTestId('gear')).toHaveValue('2');
  const peak = await page.getByTestId('pane0-peak').getAttribute('data-bytes');
  const sizes = page.getByTestId('sizes');
  await sizes.fill('nosuch=5');
  await sizes.dispatchEvent('change');
  // as `memplan plan --size nosuch=5` says
  await expect(page.getByTestId('sizes-error')).toContainText("no tensor 'nosuch'");
  await expect(sizes).toHaveValue('nosuch=5');
  await expect(sizes).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByTestId('gears')).toHaveValue('1,2');
  await expect(page.getByTestId('pane0-peak')).toHaveAttribute('data-bytes', peak);
  // the link opens the model (without the size it cannot take, said under the field)
  await page.waitForTimeout(300);
  const other = await context.newPage();
  await other.goto(page.url());
  await ready(other);
  await expect(other.getByTestId('pane0-peak')).toHaveAttribute('data-bytes', peak);
  await expect(other.getByTestId('link-error')).toHaveCount(0);
  // fixed: the message goes
  await sizes.fill('');
  await sizes.dispatchEvent('change');
  await expect(page.getByTestId('sizes-error')).toHaveCount(0);
  await expect(page.getByTestId('pane0-peak')).toHaveAttribute('data-bytes', peak);
});

test('a long bad value wraps under its field instead of widening the page', async ({ page }) => {
  await page.goto('/');
  await ready(page);
  const long = 'x'.repeat(3000);
  await setGears(page, long);
  await expect(page.getByTestId('gears-error')).toBeVisible();
  const w = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(w).toBeLessThanOrEqual(page.viewportSize().width);
});
