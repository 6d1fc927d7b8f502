// Every runtime allocator is a pane kind (`runtime-NAME`, from the core's registry): each opens
// on the default model with its statistics and occupancy view; acl-pool agrees with
// `memplan simulate`; knobs change the result and travel in the share link.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { memplan } from './memplan.mjs';

const KINDS = ['pool', 'reuse', 'bfc', 'acl-pool', 'acl-tiered', 'ge-v1', 'ge-v2'];

test.beforeEach(async ({ page }) => {
  page.on('pageerror', (e) => { throw new Error(`page error: ${e.message}`); });
});

async function rawSizes(page, i) {
  // raw tensor sizes, as the CLI simulates them: no GE padding, alignment 1
  await page.locator(`#pane${i}-pad`).selectOption('none');
  await page.getByTestId(`pane${i}-align`).selectOption('custom');
}

test('every runtime pane kind opens with its statistics and occupancy', async ({ page }) => {
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  const options = await page.getByTestId('pane1-strategy').locator('option').allTextContents();
  for (const k of KINDS) expect(options).toContain(`runtime-${k}`);
  for (const k of KINDS) {
    await page.getByTestId('pane1-strategy').selectOption(`runtime-${k}`);
    await expect(page.getByTestId('pane1-strategy')).toHaveValue(`runtime-${k}`);
    await expect(page.getByTestId('pane1-peak')).toBeVisible();
    await expect(page.getByTestId('pane1-reserved')).toBeVisible();
    await expect(page.getByTestId('pane1-inuse')).toBeVisible();
    await expect(page.getByTestId('pane1-hits')).toBeVisible();
    await expect(page.getByTestId('pane1-leaks')).toHaveText('none');
    const occ = page.getByTestId('pane1-occupancy');
    await expect(occ).toBeVisible();
    expect(Number(await occ.getAttribute('data-points'))).toBeGreaterThan(10);
    await expect(occ).toHaveAttribute('data-levels', k === 'acl-tiered' ? '4' : '0');
    if (k === 'acl-tiered') {
      await expect(page.getByTestId('pane1-levels')).toContainText('L1');
      await page.getByTestId('pane1').screenshot({ path: 'artifacts/runtime-acl-tiered.png' });
    }
  }
});

test('acl-pool agrees with `memplan simulate`, its knobs change it and stay in the link', async ({ page }) => {
  const m = 'static/samples/mobilenet_v2_randinit.stripped.onnx';
  // exit status 3: some allocations failed (the small pool below)
  const cli = (extra) => JSON.parse(memplan([
    'simulate', m, '--dim', 'batch=1', '-a', 'acl-pool', '--format', 'json', ...extra,
  ], { statuses: [0, 3] })).allocators[0];
  const dflt = cli([]);
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await page.getByTestId('pane1-strategy').selectOption('runtime-acl-pool');
  await rawSizes(page, 1);
  await expect(page.getByTestId('pane1-reserved')).toHaveAttribute('data-bytes', String(dflt.reserved_bytes));
  await expect(page.getByTestId('pane1-inuse')).toHaveAttribute('data-bytes', String(dflt.peak_in_use_bytes));
  await expect(page.getByTestId('pane1-overhead')).toContainText('72 B');
  await expect(page.getByTestId('pane1-sim-peak')).toHaveAttribute('data-bytes', String(dflt.peak_bytes));
  // 8 blocks of 4 MiB: some tensors are larger than a block, some find the stack empty
  const small = cli(['--block-size', '4194304', '--num-blocks', '8']);
  expect(small.failures).toBeGreaterThan(0);
  await page.getByTestId('pane1-knob-block-size').fill('4194304');
  await page.getByTestId('pane1-knob-block-size').dispatchEvent('change');
  await page.getByTestId('pane1-knob-num-blocks').fill('8');
  await page.getByTestId('pane1-knob-num-blocks').dispatchEvent('change');
  await expect(page.getByTestId('pane1-allocs')).toContainText(`${small.failures} failed`);
  // (the pane's peak is offset + tensor size; the allocator's figures count whole blocks)
  await expect(page.getByTestId('pane1-inuse')).toHaveAttribute('data-bytes', String(small.peak_in_use_bytes));
  // the link keeps the knobs
  await expect(page).toHaveURL(/#v=1&z=/);
  const url = page.url();
  const again = await page.context().newPage();
  again.on('pageerror', (e) => { throw new Error(`page error: ${e.message}`); });
  await again.goto(url);
  await expect(again.locator('html[data-ready]')).toHaveCount(1);
  await expect(again.getByTestId('pane1-strategy')).toHaveValue('runtime-acl-pool');
  await expect(again.getByTestId('pane1-knob-num-blocks')).toHaveValue('8');
  await expect(again.getByTestId('pane1-allocs')).toContainText(`${small.failures} failed`);
});

test('every runtime replay of a graph is valid, on screen and for `memplan validate`', async ({ page }) => {
  // A replay allocates at the producer and frees after the last reader: GE's zero-copy,
  // no-reuse and atomic rules are planning rules it does not follow, so it is checked (and
  // exported) without them. Before, every runtime pane on a graph said "invalid plan".
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memplan-replay-'));
  for (const sample of ['resnet50', 'ge-streams']) {
    await page.goto(`/?sample=${sample}`);
    await expect(page.locator('html[data-ready]')).toHaveCount(1);
    for (const k of KINDS) {
      await page.getByTestId('pane1-strategy').selectOption(`runtime-${k}`);
      await expect(page.getByTestId('pane1-valid')).toBeVisible();
      await expect(page.getByTestId('pane1-invalid')).toHaveCount(0);
    }
    const [d] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-json').click()]);
    const file = path.join(dir, `${sample}.plan.json`);
    fs.writeFileSync(file, fs.readFileSync(await d.path()));
    expect(memplan(['validate', file])).toContain('valid');
  }
});

test('acl-tiered: the level capacities and block size are knobs, and the levels agree with `memplan simulate`', async ({ page }) => {
  const m = 'static/samples/mobilenet_v2_randinit.stripped.onnx';
  const cli = (extra) => JSON.parse(memplan([
    'simulate', m, '--dim', 'batch=1', '-a', 'acl-tiered', '--format', 'json', ...extra,
  ], { statuses: [0, 3] })).allocators[0];
  // two levels: 1 MiB of L1, then DDR without limit; 4 KiB blocks
  const two = cli(['--levels', 'L1=1048576,DDR=inf', '--tier-block-size', '4096']);
  expect(two.levels.map((l) => l.level.name)).toEqual(['L1', 'DDR']);
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await page.getByTestId('pane1-strategy').selectOption('runtime-acl-tiered');
  await rawSizes(page, 1);
  await expect(page.getByTestId('pane1-levels').locator('p')).toHaveCount(4);
  await page.getByTestId('pane1-knob-levels').fill('L1=1048576,DDR=inf');
  await page.getByTestId('pane1-knob-levels').dispatchEvent('change');
  await page.getByTestId('pane1-knob-tier-block-size').fill('4096');
  await page.getByTestId('pane1-knob-tier-block-size').dispatchEvent('change');
  const rows = page.getByTestId('pane1-levels').locator('p');
  await expect(rows).toHaveCount(2);
  for (const [j, l] of two.levels.entries()) {
    await expect(rows.nth(j)).toContainText(`${l.level.name}:`);
    await expect(rows.nth(j)).toContainText(`${l.level.allocations} allocs · ${l.level.spilled_in} spilled in`);
  }
  await expect(rows.nth(1)).toContainText('∞');
  await expect(page.getByTestId('pane1-occupancy')).toHaveAttribute('data-levels', '2');
  await expect(page.getByTestId('pane1-inuse')).toHaveAttribute('data-bytes', String(two.peak_in_use_bytes));
  // the allocator's own peak is the CLI's (the pane's Peak is the layout's top byte, levels
  // laid end to end: it says so in the Allocator peak's description)
  await expect(page.getByTestId('pane1-sim-peak')).toHaveAttribute('data-bytes', String(two.peak_bytes));
});

