// Issue 27: each of a pane's GE run-time views (its "GE run-time views" tabs, web/src/sections)
// shows, on the model a CLI test works out by hand, that test's figures. The models are the
// built-in samples where one shows the rule (ge-streams for the gears' virtual blocks) and the
// CLI tests' own files otherwise (cli/tests/io/*.json, static/samples/ge-chain.json), opened
// with the file picker. Each tab is shot to artifacts/seeds-<tab>.png.
import { test, expect } from '@playwright/test';
import path from 'node:path';
import { root } from './memplan.mjs';
import { setGears } from './page.mjs';

test.beforeEach(async ({ page }) => {
  page.on('pageerror', (e) => { throw new Error(`page error: ${e.message}`); });
});

async function ready(page) {
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
}

async function open(page, file) {
  await ready(page);
  await page.getByTestId('file').setInputFiles(path.join(root, file));
  await expect(page.locator('section.summary')).toContainText(path.basename(file));
  await expect(page.getByTestId('pane0-peak')).toBeVisible();
}

// Opens pane 0's views and its tab `key`; returns the tab's body.
async function tab(page, key) {
  const details = page.getByTestId('pane0-sections');
  if (!(await details.evaluate((d) => d.open))) await page.getByTestId('pane0-sections-open').click();
  const button = page.getByTestId(`pane0-tab-${key}`);
  if ((await button.getAttribute('aria-selected')) !== 'true') await button.click();
  const body = page.getByTestId(`pane0-sec-${key}`);
  await expect(body).toBeVisible();
  return body;
}

async function shoot(page, key) {
  await page.getByTestId('pane0').screenshot({ path: `artifacts/seeds-${key}.png` });
}

// raw tensor sizes, as `memplan simulate` replays them: no GE padding, alignment 1
async function rawSizes(page) {
  await page.locator('#pane0-pad').selectOption('none');
  await page.getByTestId('pane0-align').selectOption('custom');
  await expect(page.getByTestId('pane0-peak')).toBeVisible();
}

const cells = async (row) => (await row.locator('td').allInnerTexts()).map((t) => t.trim()).join(' ');

test('graph I/O: offsets, sizes, address ops and copies (cli/tests/ge_reports.rs io_table_and_plan_file)', async ({ page }) => {
  await open(page, 'cli/tests/io/ref.json');
  const body = await tab(page, 'io');
  const rows = body.getByTestId('pane0-io-row');
  await expect(rows).toHaveCount(4);
  // x 1536 B at 2048 (its buffer holds the output y); z 2048 B at 3584; w 1024 B at 5632
  expect(await cells(rows.nth(0))).toBe('input x 2048 1536 A, R zero-copy');
  expect(await cells(rows.nth(1))).toBe('output y 2048 1536 R copied 1000 B: ref or view of a graph input');
  expect(await cells(rows.nth(2))).toBe('output z 3584 2048 B, C copied 2000 B: read again by another op');
  expect(await cells(rows.nth(3))).toBe('output w 5632 1024 C zero-copy');
  await expect(body.getByTestId('pane0-io-copied')).toHaveAttribute('data-bytes', '3000');
  await shoot(page, 'io');
});

test('atomic clean: memset ranges and counts under both policies (atomic_clean_by_id_under_both_policies)', async ({ page }) => {
  await open(page, 'cli/tests/io/atomic.json');
  let body = await tab(page, 'atomic');
  // m1 1536 B, m2 3072 B, C's workspace 512 B, all atomic: one AtomicAddrClean zeroes the
  // merged atomic region [0, 5120); per op three MemSets
  await expect(body.getByTestId('pane0-atomic-counts')).toContainText('1 memset op(s); centralised policy 1, per-op policy 3');
  await expect(body.getByTestId('pane0-memset')).toHaveText(['AtomicAddrClean for A, B, C: [0, +5120)']);
  await shoot(page, 'atomic');
  // GE atomicCleanPolicy=1: m2 at 0, m1 at 3072 with the workspace nested at its head
  await page.getByTestId('pane0').getByLabel('central atomic clean').uncheck();
  body = await tab(page, 'atomic');
  await expect(body.getByTestId('pane0-memset')).toHaveText([
    'MemSet_A for A: [3072, +1536)', 'MemSet_B for B: [0, +3072)', 'MemSet_C for C: [3072, +512)',
  ]);
  await expect(body.getByTestId('pane0-atomic-counts')).toContainText('3 memset op(s); centralised policy 1, per-op policy 3');
});

test('single-op: only workspaces, per stream (single_op_mode_holds_only_workspaces)', async ({ page }) => {
  await open(page, 'cli/tests/io/single.json');
  const body = await tab(page, 'single');
  // workspaces A 512 + 3072, B 5120 (stream 1), C 512: stream 0 keeps A's 3584 B buffer (C
  // reuses it), stream 1 B's 5120 B: 8704 B in all
  await expect(body.getByTestId('pane0-single-device')).toHaveAttribute('data-bytes', '8704');
  const rows = body.getByTestId('pane0-single-row');
  expect(await cells(rows.nth(0))).toBe('A 0 3000 3584');
  expect(await cells(rows.nth(1))).toBe('B 1 2500 5120');
  expect(await cells(rows.nth(2))).toBe('C 0 564 512');
  await expect(body.getByTestId('pane0-single-stream').first()).toHaveText('stream 0: 3584 B held, 1 device allocation(s)');
  await shoot(page, 'single');
});

test('runtime allocators per stream: V1 shared, V2 shared, V2 per stream (runtime_allocators_per_stream_on_a_graph)', async ({ page }) => {
  await open(page, 'cli/tests/io/streams.json');
  await rawSizes(page);
  const body = await tab(page, 'streams');
  // a [0,1], b [1,2] on stream 1, c [2,3], y from 3; 100 B each, 64 KiB pages. ge-v1 (raw
  // bytes): 200 B, 2 hits; ge-v2 shared: 2 pages, 2 hits; one V2 per stream: stream 0's a, c,
  // y take 2 pages, stream 1's b a third after them: 196,608 B, 1 hit
  const row = (n) => body.getByTestId(`pane0-streams-${n}`);
  await expect(row('ge-v1')).toHaveAttribute('data-reserved', '200');
  await expect(row('ge-v1')).toHaveAttribute('data-hits', '2');
  await expect(row('ge-v2')).toHaveAttribute('data-reserved', '131072');
  await expect(row('ge-v2')).toHaveAttribute('data-hits', '2');
  await expect(row('ge-v2-streams')).toHaveAttribute('data-reserved', '196608');
  await expect(row('ge-v2-streams')).toHaveAttribute('data-hits', '1');
  await expect(row('ge-v2-streams')).toContainText('stream 0: 3 [0, 65636) · stream 1: 1 [131072, 131172)');
  await shoot(page, 'streams');
});

test('hybrid: static plan plus ge-v2 at run time (hybrid_one_flow)', async ({ page }) => {
  await open(page, 'cli/tests/io/hybrid.json');
  await page.getByTestId('pane0-strategy').selectOption('greedy-size-best-fit');
  await rawSizes(page);
  const dim = page.getByTestId('dim-batch');
  await dim.fill('4');
  await dim.dispatchEvent('change');
  await expect(page.getByTestId('pane0-peak')).toBeVisible();
  const body = await tab(page, 'hybrid');
  // batch 4, raw sizes: b (4000 B) and the output y (40 B) static, 4040 B; ge-v2 reserves two
  // 64 KiB pages for x, a, c (4096 B each; c takes a's idle span); the device holds 135,112 B
  const h = body.getByTestId('pane0-hybrid');
  await expect(h).toHaveAttribute('data-static', '4040');
  await expect(h).toHaveAttribute('data-reserved', '131072');
  await expect(h).toHaveAttribute('data-device', '135112');
  await expect(h).toContainText('static 3.95 KiB (2 buffers, 4040 B) · run time 128.0 KiB reserved (3 buffers, 131072 B) · device 131.9 KiB (135112 B)');
  await shoot(page, 'hybrid');
});

test('allocator statistics and access cost per level (reuse_counts_its_hits_and_probes, access_cost_per_memory_level)', async ({ page }) => {
  await open(page, 'static/samples/ge-chain.json');
  await page.getByTestId('pane0-strategy').selectOption('runtime-reuse');
  await rawSizes(page);
  let body = await tab(page, 'stats');
  // the reuse table: 4 hits, 0+1+1+2+1+2 = 7 probes over 6 requests; f (64 B, the output)
  // copied out per run
  await expect(body.getByTestId('pane0-stat-hits')).toHaveText('4');
  await expect(body.getByTestId('pane0-stat-probes')).toHaveAttribute('data-probes', '7');
  await expect(body.getByTestId('pane0-stat-probes')).toContainText('1.17 per request');
  await expect(body.getByTestId('pane0-stat-records')).toHaveText('6 kept, 0 dropped');
  await expect(body.getByTestId('pane0-stat-transfers')).toHaveAttribute('data-io', '64');
  // all in HBM: read 11,534,336 B, written 11,534,400 B, x 16 = 369,099,776
  await expect(body.getByTestId('pane0-access-total')).toHaveAttribute('data-cost', '369099776');
  expect(await cells(body.getByTestId('pane0-access-HBM'))).toBe('HBM 11534336 11534400 16 369099776');
  await shoot(page, 'stats');
  // acl-tiered: b, d, f in L1 (4,194,368 B x 1), a, c, e in L2 (18,874,368 B x 4)
  await page.getByTestId('pane0-strategy').selectOption('runtime-acl-tiered');
  body = await tab(page, 'stats');
  await expect(body.getByTestId('pane0-access-total')).toHaveAttribute('data-cost', '79691840');
  await expect(body.getByTestId('pane0-access-L1')).toHaveAttribute('data-cost', '4194368');
  await expect(body.getByTestId('pane0-access-L2')).toHaveAttribute('data-cost', '75497472');
});

test('training view beside inference (training_step_beside_inference)', async ({ page }) => {
  await open(page, 'cli/tests/io/cnn.json');
  await tab(page, 'training');
  await page.getByTestId('pane0-optimizer').selectOption('momentum');
  const body = page.getByTestId('pane0-sec-training');
  // peak at P's backward: x c r grad(p) grad(r) grad(Wf) = 6656 B; weights Wc 432 + Wf 2560
  // = 2992 B; momentum keeps one velocity per weight
  await expect(body.getByTestId('pane0-training-bound')).toHaveAttribute('data-bytes', '6656');
  await expect(body.getByTestId('pane0-training-weights')).toHaveAttribute('data-bytes', '2992');
  await expect(body.getByTestId('pane0-training-state')).toHaveAttribute('data-bytes', '2992');
  await shoot(page, 'training');
  // Adam: two moments per weight
  await page.getByTestId('pane0-optimizer').selectOption('adam');
  await expect(body.getByTestId('pane0-training-state')).toHaveAttribute('data-bytes', '5984');
});

test('expandable memory changes the virtual blocks (ge-streams sample, gears 1 and 8)', async ({ page }) => {
  await ready(page);
  await page.getByTestId('sample').selectOption('ge-streams');
  await expect(page.getByTestId('pane0-peak')).toBeVisible();
  await setGears(page, '1,8');
  await expect(page.getByTestId('pane0-expandable')).toBeVisible();
  let body = await tab(page, 'expandable');
  // batch 8, GE sizes ceil512(bytes + 32): a and s 402,653,696 B, b 268,435,968, c
  // 536,871,424 (HBM), p 134,218,240 (P2P_DDR). One virtual block per memory type: HBM's is
  // the four side by side, 1,610,614,784 B
  const v = body.getByTestId('pane0-vblocks');
  await expect(v).toHaveAttribute('data-groups', '1610614784;134218240');
  await page.getByTestId('pane0-expandable').check();
  body = await tab(page, 'expandable');
  // expandable memory: pieces of at most 400 MiB where a tensor allows (c alone is 512 MiB)
  await expect(body.getByTestId('pane0-vblocks')).toHaveAttribute('data-groups', '402653696,268435968,402653696,536871424;134218240');
  await expect(body.getByTestId('pane0-vblocks')).toContainText('expandable memory: pieces of at most 400 MiB');
  await shoot(page, 'expandable');
});
