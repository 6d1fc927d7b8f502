// What is typed in a field stays there while a plan runs: a planning pane re-renders the page
// five times a second (its elapsed time), and a field that showed the state's value on every
// render lost what was being typed (the default page plans GE's runtime allocator in the worker
// at load, so every graph model met it at startup). The text typed is the field's draft in the
// page's State (Action::Typing) until the field commits it.
import { test, expect } from '@playwright/test';

// A graph of `n` Add ops, each reading the previous tensor and one of the 12 before it, with a
// symbolic `batch` dim and channel counts spread log-uniformly from 1 to 4096: the exact search
// (`optimal`) does not prove it within 10 s (the CLI's `--time-limit 5000` on 3000 ops stops at
// the limit with a gap of 0.7 %), so pane 2 keeps planning while the test types.
function longGraph(n, seed = 7) {
  let x = seed;
  const rand = () => {
    // xorshift32
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    return x / 4294967296;
  };
  const tensors = [{ name: 't0', dtype: 'float32', shape: ['batch', 16, 8, 8] }];
  const ops = [{ name: 'in', type: 'Data', outputs: ['t0'] }];
  for (let i = 1; i < n; i++) {
    const c = Math.max(1, Math.floor(Math.exp(rand() * Math.log(4096))));
    tensors.push({ name: `t${i}`, dtype: 'float32', shape: ['batch', c, 8, 8] });
    const j = Math.max(0, i - 1 - Math.floor(rand() * 12));
    const inputs = j === i - 1 ? [`t${i - 1}`] : [`t${i - 1}`, `t${j}`];
    ops.push({ name: `op${i}`, type: 'Add', inputs, outputs: [`t${i}`] });
  }
  return JSON.stringify({
    format: 'memplan.graph/1', name: 'long', tensors, ops, inputs: ['t0'], outputs: [`t${n - 1}`],
  });
}

test('text typed while a plan runs stays in its field until it is committed', async ({ page }) => {
  page.on('pageerror', (e) => { throw new Error(`page error: ${e.message}`); });
  await page.goto('/');
  await expect(page.getByTestId('pane0-peak')).toBeVisible();
  await page.getByTestId('file').setInputFiles({ name: 'long.json', mimeType: 'application/json', buffer: Buffer.from(longGraph(3000)) });
  await expect(page.getByTestId('model-name')).toHaveText('long');
  await expect(page.getByTestId('pane0-peak')).toBeVisible();
  await page.getByTestId('pane1-strategy').selectOption('optimal');
  await page.getByTestId('pane1-time-limit').selectOption('30000');
  const planning = page.getByTestId('pane1-planning');
  await expect(planning).toBeVisible();
  // one key every 300 ms: the page re-renders between any two keys
  const type = async (id, text) => {
    const field = page.getByTestId(id);
    await field.click();
    await field.fill(''); // (a custom alignment starts at 1)
    await field.pressSequentially(text, { delay: 300 });
    await page.waitForTimeout(500);
    await expect(field).toHaveValue(text);
  };
  // (leaving a field commits it: the next field's click commits the one before)
  await type('dim-batch', '4');
  await type('sizes', 't5=4KiB');
  await type('gears', '1,2');
  // a pane's own field (a custom alignment) keeps its text the same way
  await page.getByTestId('pane0-align').selectOption('custom');
  await type('pane0-align-custom', '1024');
  // the budget last: once committed, the search stops at the first plan that fits
  await type('budget', '200MiB');
  // the pane still planned the whole time: the renders did happen while the text was typed
  await expect(planning).toBeVisible();
  // committed, each field shows the state's value as the page words it (the budget exactly in
  // its largest whole unit, a size in bytes); batch is the gears' dim now, so it has no field
  await page.getByTestId('budget').press('Tab');
  await expect(page.getByTestId('pane0-align-custom')).toHaveValue('1024');
  await expect(page.getByTestId('budget')).toHaveValue('200 MiB');
  await expect(page.getByTestId('gears')).toHaveValue('1,2');
  await expect(page.getByTestId('sizes')).toHaveValue('t5=4096');
  await expect(page.getByTestId('notice')).toHaveCount(0);
});
