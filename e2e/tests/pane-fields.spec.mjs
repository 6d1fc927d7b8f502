// A pane's own fields (runtime-allocator knobs, a custom alignment) keep what was typed when
// it is refused, mark the field invalid and say why under it; the pane keeps its last good
// plan until the value is fixed, and the message goes once it is.
import { test, expect } from '@playwright/test';
import { memplan } from './memplan.mjs';

test.beforeEach(async ({ page }) => {
  page.on('pageerror', (e) => { throw new Error(`page error: ${e.message}`); });
});

async function type(page, id, text) {
  await page.getByTestId(id).fill(text);
  await page.getByTestId(id).dispatchEvent('change');
}

test('a refused runtime knob stays typed, with the reason under the field, until fixed', async ({ page }) => {
  // the CLI refuses the same level list (exit status 2, a usage error)
  expect(() => memplan(['simulate', 'static/samples/mobilenet_v2_randinit.stripped.onnx', '--dim', 'batch=1',
    '-a', 'acl-tiered', '--levels', 'L1=lots'])).toThrow();
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await page.getByTestId('pane1-strategy').selectOption('runtime-acl-tiered');
  const levels = page.getByTestId('pane1-levels').locator('p');
  await expect(levels).toHaveCount(4);
  const field = page.getByTestId('pane1-knob-levels');
  await type(page, 'pane1-knob-levels', 'L1=lots');
  await expect(field).toHaveValue('L1=lots');
  await expect(field).toHaveAttribute('aria-invalid', 'true');
  await expect(field).toHaveAttribute('aria-describedby', 'pane1-knob-levels-error');
  const why = page.getByTestId('pane1-knob-levels-error');
  await expect(why).toBeVisible();
  await expect(why).toContainText('levels');
  // the message sits under its field, not in a banner at the top
  const [f, w] = [await field.boundingBox(), await why.boundingBox()];
  expect(w.y).toBeGreaterThanOrEqual(f.y + f.height - 1);
  expect(Math.abs(w.x - f.x)).toBeLessThan(40);
  // the pane keeps its last good plan meanwhile
  await expect(levels).toHaveCount(4);
  // a number knob out of range says its range
  await type(page, 'pane1-knob-tier-block-size', '0');
  await expect(page.getByTestId('pane1-knob-tier-block-size')).toHaveValue('0');
  await expect(page.getByTestId('pane1-knob-tier-block-size-error')).toContainText('a whole number from 1');
  // fixed: the message goes, the plan follows
  await type(page, 'pane1-knob-levels', 'L1=1048576,DDR=inf');
  await expect(why).toHaveCount(0);
  await expect(field).not.toHaveAttribute('aria-invalid', 'true');
  await expect(levels).toHaveCount(2);
  await type(page, 'pane1-knob-tier-block-size', '');
  await expect(page.getByTestId('pane1-knob-tier-block-size-error')).toHaveCount(0);
});

test('a refused custom alignment stays typed, with the reason under the field, until fixed', async ({ page }) => {
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await page.getByTestId('pane1-align').selectOption('custom');
  const field = page.getByTestId('pane1-align-custom');
  await expect(field).toBeVisible();
  // inside its pane, also on a phone (it stuck out by 9-17 px, off screen at 390 px)
  // (crossing 640 px moves the sections, so the boxes are read once the page has settled)
  for (const width of [390, 1000, 1360]) {
    await page.setViewportSize({ width, height: 900 });
    await expect.poll(async () => {
      const f = await field.boundingBox();
      const pane = await page.getByTestId('pane1').boundingBox();
      return Boolean(f && pane) && f.x + f.width <= pane.x + pane.width;
    }, { message: `inside its pane at ${width} px` }).toBe(true);
  }
  await expect(field).toBeVisible();
  const peak = page.getByTestId('pane1-peak');
  await type(page, 'pane1-align-custom', '4096');
  await expect(field).toHaveValue('4096');
  const good = await peak.textContent();
  await type(page, 'pane1-align-custom', '0');
  await expect(field).toHaveValue('0');
  await expect(field).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByTestId('pane1-align-custom-error')).toContainText('from 1 to');
  await expect(peak).toHaveText(good);
  await type(page, 'pane1-align-custom', '8192');
  await expect(page.getByTestId('pane1-align-custom-error')).toHaveCount(0);
  await expect(field).toHaveValue('8192');
  // a refused value is dropped when a preset is chosen: back on "custom", no stale error
  await type(page, 'pane1-align-custom', '0');
  await expect(page.getByTestId('pane1-align-custom-error')).toBeVisible();
  await page.getByTestId('pane1-align').selectOption('512');
  await expect(field).toHaveCount(0);
  await page.getByTestId('pane1-align').selectOption('custom');
  await expect(field).toBeVisible();
  await expect(field).toHaveValue('1');
  await expect(field).not.toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByTestId('pane1-align-custom-error')).toHaveCount(0);
});

test('tier levels the manager refuses whatever the model are refused in the field', async ({ page }) => {
  // core simulate/acl_tiered.rs check_options: only the last level may be unbounded, a
  // mapping names a level of the list; the CLI says the same (exit status 2)
  for (const levels of ['L1=inf,DDR=5']) {
    expect(() => memplan(['simulate', 'static/samples/tetris.csv', '-a', 'acl-tiered', '--levels', levels])).toThrow();
  }
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await page.getByTestId('pane1-strategy').selectOption('runtime-acl-tiered');
  const rows = page.getByTestId('pane1-levels').locator('p');
  await expect(rows).toHaveCount(4);
  await type(page, 'pane1-knob-levels', 'L1=inf,DDR=5');
  await expect(page.getByTestId('pane1-knob-levels-error')).toContainText('only the last level may be unbounded');
  await expect(rows).toHaveCount(4);
  await type(page, 'pane1-knob-levels', '');
  await type(page, 'pane1-knob-map', 'input=L9');
  await expect(page.getByTestId('pane1-knob-map-error')).toContainText("no level 'L9'");
  await expect(rows).toHaveCount(4);
});
