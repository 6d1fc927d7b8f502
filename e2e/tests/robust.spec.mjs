// A failure inside the planner never leaves a silent dead page: a panic on the main thread
// shows the crash screen, a trap that never reaches the panic hook too, and a plan that
// crashes or runs long in the background worker costs one pane (its message, Cancel, "Plan
// again"), not the page. The HTML skeleton is there before the wasm starts.
import { test, expect } from '@playwright/test';
import { trace } from '../traces.mjs';

async function ready(page) {
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
}

// The input (issue 18): a lifetime reaching 2^64 − 2 steps, which a runtime allocator
// replayed step by step.
const LONG_LIFETIME = 'id,lower,upper,size\na,0,18446744073709551614,64\nb,0,3,32\nc,2,5,32\n';

test('the HTML skeleton is in the page before any wasm runs', async ({ page }) => {
  await page.route(/\.wasm$/, () => {}); // never answered: the wasm never starts
  await page.goto('/', { waitUntil: 'domcontentloaded' });
  const sk = page.getByTestId('skeleton');
  await expect(sk).toBeVisible();
  await expect(sk).toContainText('Loading the planner');
  await expect(sk).toContainText('memplan');
});

test('a panic on the main thread shows the crash screen', async ({ page }) => {
  await page.goto('/');
  await ready(page);
  await page.evaluate(() => {
    try { window.wasmBindings.memplan_test_panic('page'); } catch (_) { /* the trap */ }
  });
  const crash = page.getByTestId('crash');
  await expect(crash).toBeVisible();
  await expect(crash).toContainText('The playground stopped');
  await expect(crash).toContainText('test panic requested by the page');
  await expect(crash.getByRole('button', { name: 'Reload the page' })).toBeVisible();
  await expect(page.locator('#app')).toBeHidden();
});

test('a trap that never reaches the panic hook shows the crash screen too', async ({ page }) => {
  await page.goto('/');
  await ready(page);
  // what running out of memory in wasm looks like: a RuntimeError, no panic message
  await page.evaluate(() => setTimeout(() => { throw new WebAssembly.RuntimeError('unreachable'); }));
  await expect(page.getByTestId('crash')).toContainText('unreachable');
});

test('a plan that crashes in the worker costs one pane, not the page', async ({ page }) => {
  page.on('pageerror', (e) => { throw new Error(`page error: ${e.message}`); });
  await page.goto('/');
  await ready(page);
  // the hook crashes the next job sent to the worker: a graph's runtime pane (pane 2 at first)
  // plans in the worker at load, so arm it once that plan is in, or it crashes that one and
  // the choice below replaces it
  await expect(page.getByTestId('pane1-peak')).toBeVisible();
  await page.evaluate(() => window.wasmBindings.memplan_test_panic('worker'));
  await page.getByTestId('pane1-strategy').selectOption('runtime-bfc');
  const err = page.getByTestId('pane1-error');
  await expect(err).toContainText('Planning crashed in the background worker');
  await expect(err).toContainText('test panic requested by the page');
  // the other pane, the timeline and the table still work
  await expect(page.getByTestId('pane0-peak')).toBeVisible();
  await expect(page.getByTestId('crash')).toHaveCount(0);
  await page.getByTestId('pane0-strategy').selectOption('greedy-size-best-fit');
  await expect(page.getByTestId('pane0-peak')).toBeVisible();
  // a new worker plans it again
  await page.getByTestId('pane1-retry').click();
  await expect(page.getByTestId('pane1-peak')).toBeVisible();
});

test('a runtime allocator on a lifetime of 2^64 steps answers in its pane', async ({ page }) => {
  page.on('pageerror', (e) => { throw new Error(`page error: ${e.message}`); });
  await page.goto('/');
  await ready(page);
  await page.getByTestId('file').setInputFiles({ name: 'long.csv', mimeType: 'text/csv', buffer: Buffer.from(LONG_LIFETIME) });
  await expect(page.locator('section.summary')).toContainText('long.csv');
  await expect(page.getByTestId('pane0-peak')).toBeVisible();
  await page.getByTestId('pane1-strategy').selectOption('runtime-reuse');
  // a plan or a message in that pane; never "No model loaded" everywhere, never a dead page
  await expect(page.getByTestId('pane1-peak').or(page.getByTestId('pane1-error'))).toBeVisible();
  await expect(page.getByTestId('pane0-peak')).toBeVisible();
  await expect(page.getByText('No model loaded')).toHaveCount(0);
  await expect(page.getByTestId('crash')).toHaveCount(0);
});

test('a long plan shows its elapsed time and can be cancelled', async ({ page }) => {
  page.on('pageerror', (e) => { throw new Error(`page error: ${e.message}`); });
  await page.goto('/');
  await ready(page);
  // the exact solver runs to its 2 s limit on 6000 generated buffers (3000 are proven
  // optimal in well under a second since the ceiling and boxing seeds)
  await page.getByTestId('file').setInputFiles({ name: 'hard.csv', mimeType: 'text/csv', buffer: Buffer.from(trace(6000)) });
  await expect(page.getByTestId('pane0-peak')).toBeVisible();
  await page.getByTestId('pane1-strategy').selectOption('optimal');
  // queued or running: it shows how long it has waited, and Cancel
  await expect(page.getByTestId('pane1-elapsed')).toHaveText(/^ (\d+\.\d s|\(queued\))$/);
  // an anytime search's progress: the time used of its limit (PlanOptions::time_limit_ms)
  await expect(page.getByTestId('pane1-progress')).toHaveAttribute('max', '2000');
  await expect(page.getByTestId('pane1-limit')).toHaveText(' of at most 2.0 s (its time limit)');
  // the elapsed time redraws the pane five times a second: no waiting for it to be still
  await page.getByTestId('pane1-cancel').dispatchEvent('click');
  await expect(page.getByTestId('pane1-error')).toContainText(/Planning cancelled( after \d+\.\d s)?\./);
  await expect(page.getByTestId('pane0-peak')).toBeVisible();
  await page.getByTestId('pane1-retry').click();
  await expect(page.getByTestId('pane1-planning').or(page.getByTestId('pane1-peak'))).toBeVisible();
});
