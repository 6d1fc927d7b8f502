// A model whose default dims are impossible opens with its dims panel asking for the dim that
// broke it, and plans once it is given (issue 28: PP-OCRv5's recognition model was refused).
// testdata/models/width_reshape.onnx (scripts/make-width-reshape-onnx.py): x is
// [DynamicDimension.0, 3, 48, DynamicDimension.1]; a Reshape to [0, -1, 120] needs the
// 144 W elements of an image to split into rows of 120, which W = 1 cannot.
import { test, expect } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './memplan.mjs';

const model = join(root, 'testdata/models/width_reshape.onnx');

test.beforeEach(async ({ page }) => {
  page.on('pageerror', (e) => { throw new Error(`page error: ${e.message}`); });
});

async function asksForTheWidth(page) {
  await expect(page.getByTestId('model-name')).toContainText('width_reshape');
  await expect(page.getByTestId('load-error')).toHaveCount(0);
  const width = page.getByTestId('dim-DynamicDimension.1');
  await expect(width).toHaveAttribute('aria-invalid', 'true');
  await expect(width).toHaveValue('');
  const why = page.getByTestId('dim-DynamicDimension.1-error');
  await expect(why).toContainText("Give 'DynamicDimension.1' a value");
  await expect(why).toContainText('Reshape.51');
  // the page words it for the page: no command-line flags
  await expect(page.locator('body')).not.toContainText('--dim');
  // the batch took its default and asks nothing
  await expect(page.getByTestId('dim-DynamicDimension.0')).not.toHaveAttribute('aria-invalid', 'true');
  return width;
}

async function plansOnceGiven(page, width) {
  await width.fill('320');
  await width.press('Enter');
  await expect(width).not.toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByTestId('dim-DynamicDimension.1-error')).toHaveCount(0);
  // x, the Relu, the Reshape's view and the last Relu: 1·3·48·320 float32 = 184,320 B each
  await expect(page.getByTestId('pane0-peak')).toBeVisible();
  await expect(page.getByTestId('unknown-size')).toHaveCount(0);
}

test('a file whose default dims are impossible asks for the one that broke it', async ({ page }) => {
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await page.getByTestId('file').setInputFiles(model);
  await plansOnceGiven(page, await asksForTheWidth(page));
});

test('the same model sent by a host page asks the same', async ({ page }) => {
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  const bytes = [...readFileSync(model)];
  await page.evaluate((b) => window.postMessage({
    type: 'memplan:model', name: 'width_reshape.onnx', bytes: new Uint8Array(b),
  }, '*'), bytes);
  await plansOnceGiven(page, await asksForTheWidth(page));
});
