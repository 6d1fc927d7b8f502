// Every control shows what the page's state holds, whatever changed it: the user, a link pasted
// into the same tab, Back, or a model sent by the host page (`memplan:model`). A `<select>` the
// user has changed no longer follows its options' `selected` attributes, so a control drawn from
// attributes alone kept the user's last choice while the panes showed the link's (issue 28: pane
// 2 showed no-reuse's peak under a selector reading greedy-size-best-fit).
import { test, expect } from '@playwright/test';

async function ready(page) {
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
}

/** Runs `act`, then waits for the link in the address bar to change; returns the new URL. */
async function linkAfter(page, act) {
  const before = page.url();
  await act();
  await expect.poll(() => page.url(), { timeout: 5_000 }).not.toBe(before);
  return page.url();
}

/** Pastes `url` into the open tab: the same document, only the fragment changes. */
async function paste(page, url) {
  await page.evaluate((u) => { location.hash = new URL(u).hash; }, url);
}

test.beforeEach(async ({ page }) => {
  page.on('pageerror', (e) => { throw new Error(`page error: ${e.message}`); });
});

test('issue 28: a link pasted into the same tab sets pane 2\'s strategy selector', async ({ page }) => {
  await page.goto('/');
  await ready(page);
  const sel = page.getByTestId('pane1-strategy');
  const link = await linkAfter(page, () => sel.selectOption('no-reuse'));
  // no-reuse's peak on the default sample: every tensor its own buffer
  const peak = page.getByTestId('pane1-peak');
  await expect(peak).toHaveAttribute('data-bytes', '52664320');
  await linkAfter(page, () => sel.selectOption('greedy-size-best-fit'));
  await expect(peak).toHaveAttribute('data-bytes', '10241536');
  await paste(page, link);
  await expect(sel).toHaveValue('no-reuse');
  await expect(peak).toHaveAttribute('data-bytes', '52664320');
});

// A control of the view, how to give it a value, and two values it can hold.
const graphControls = [
  { name: 'pane 1 strategy', id: 'pane0-strategy', kind: 'select', a: 'ge-max-block', b: 'no-reuse' },
  { name: 'pane 2 strategy', id: 'pane1-strategy', kind: 'select', a: 'no-reuse', b: 'greedy-size-first-fit' },
  { name: 'pane 1 alignment', id: 'pane0-align', kind: 'select', a: '64', b: '256' },
  { name: 'pane 2 padding', css: '#pane1-pad', kind: 'select', a: 'none', b: 'ge' },
  { name: 'op order', id: 'schedule', kind: 'select', a: 'ge-dfs', b: 'file' },
  { name: 'compare view', id: 'compare-mode', kind: 'select', a: 'side', b: 'diff' },
  { name: 'views share their input', id: 'alias-views', kind: 'check', a: true, b: false },
  // the field shows the budget exactly, in the largest unit that keeps it whole
  { name: 'memory budget', id: 'budget', kind: 'text', a: '20 MiB', b: '30 MiB' },
  { name: 'tensor search', css: '#tensor-search', kind: 'search', a: 'conv', b: 'relu' },
];

function control(page, c) {
  return c.id ? page.getByTestId(c.id) : page.locator(c.css);
}

async function give(page, c, v) {
  const el = control(page, c);
  if (c.kind === 'select') await el.selectOption(v);
  else if (c.kind === 'check') await el.setChecked(v);
  else if (c.kind === 'search') await el.fill(v);
  else { await el.fill(v); await el.press('Enter'); }
}

async function shows(page, c, v) {
  const el = control(page, c);
  if (c.kind === 'check') {
    if (v) await expect(el).toBeChecked(); else await expect(el).not.toBeChecked();
  } else {
    await expect(el).toHaveValue(v);
  }
}

test('every control follows a link pasted into the same tab', async ({ page }) => {
  await page.goto('/');
  await ready(page);
  for (const c of graphControls) {
    await test.step(c.name, async () => {
      const link = await linkAfter(page, () => give(page, c, c.a));
      await shows(page, c, c.a);
      await linkAfter(page, () => give(page, c, c.b));
      await shows(page, c, c.b);
      await paste(page, link);
      await shows(page, c, c.a);
    });
  }
});

test('every control follows Back and Forward', async ({ page }) => {
  await page.goto('/');
  await ready(page);
  for (const c of graphControls) await give(page, c, c.a);
  for (const c of graphControls) await shows(page, c, c.a);
  await page.waitForTimeout(500); // the link follows typing a moment later
  // a new model is a new history entry; the settings changed on it replace that entry
  await page.getByTestId('sample').selectOption('resnet50');
  await expect(page.locator('section.summary')).toContainText('resnet50');
  for (const c of graphControls) {
    if (c.kind === 'search') continue; // a new model clears the search
    await give(page, c, c.b);
    await shows(page, c, c.b);
  }
  await page.waitForTimeout(500);
  await page.goBack();
  await expect(page.getByTestId('sample')).toHaveValue('mobilenet_v2');
  for (const c of graphControls) await shows(page, c, c.a);
  await page.goForward();
  await expect(page.getByTestId('sample')).toHaveValue('resnet50');
  for (const c of graphControls) if (c.kind !== 'search') await shows(page, c, c.b);
});

test('the dims, gears and sizes fields follow a link, Back and the host page', async ({ page }) => {
  await page.goto('/');
  await ready(page);
  await page.getByTestId('sample').selectOption('ge-streams');
  await expect(page.locator('section.summary')).toContainText('ge-streams');
  const dims = page.locator('[data-testid^="dim-"]');
  const dim = page.getByTestId('dim-batch');
  await expect(dim).toBeVisible();
  const gears = page.getByTestId('gears');
  const withDim = await linkAfter(page, async () => { await dim.fill('3'); await dim.press('Enter'); });
  const withGears = await linkAfter(page, async () => { await gears.fill('1,2'); await gears.press('Enter'); });
  await expect(page.getByTestId('gear')).toHaveValue('2');
  const gear1 = await linkAfter(page, () => page.getByTestId('gear').selectOption('1'));
  await linkAfter(page, async () => { await gears.fill(''); await gears.press('Enter'); });
  await expect(page.getByTestId('gear')).toHaveCount(0);
  await paste(page, gear1);
  await expect(gears).toHaveValue('1,2');
  await expect(page.getByTestId('gear')).toHaveValue('1');
  await paste(page, withGears);
  await expect(page.getByTestId('gear')).toHaveValue('2');
  await paste(page, withDim);
  await expect(gears).toHaveValue('');
  await expect(dim).toHaveValue('3');

  // the host page hands over a model: a user's file, fresh settings for it
  await page.evaluate(() => window.postMessage({
    type: 'memplan:model', name: 'chain.csv', text: 'id,lower,upper,size\na,0,2,64\nb,1,3,32\n',
  }, '*'));
  await expect(page.locator('section.summary')).toContainText('chain.csv');
  await expect(page.getByTestId('sample')).toHaveValue('');
  await expect(page.getByTestId('gears')).toHaveCount(0);
  await expect(dims).toHaveCount(0);
  // and Back returns to the sample with its dim
  await page.goBack();
  await expect(page.getByTestId('sample')).toHaveValue('ge-streams');
  await expect(dim).toHaveValue('3');
});

test('an optimal pane\'s time limit travels in the link and follows it', async ({ page }) => {
  await page.goto('/');
  await ready(page);
  await page.getByTestId('pane1-strategy').selectOption('optimal');
  const limit = page.getByTestId('pane1-time-limit');
  await expect(limit).toHaveValue('2000'); // core's default, 2 s
  const link = await linkAfter(page, () => limit.selectOption('5000'));
  await linkAfter(page, () => limit.selectOption('1000'));
  await expect(limit).toHaveValue('1000');
  await paste(page, link);
  await expect(limit).toHaveValue('5000');
  // a new tab opened on the link plans with it
  const other = await page.context().newPage();
  await other.goto(link);
  await ready(other);
  await expect(other.getByTestId('pane1-time-limit')).toHaveValue('5000');
});
