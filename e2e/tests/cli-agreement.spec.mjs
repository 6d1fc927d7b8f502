// The playground and the CLI are two front ends of one planner: for the same model and settings
// they must print the same peak. The CLI is the debug build of this checkout (global-setup.mjs).
import { test, expect } from '@playwright/test';
import { packSecondPane, setGears } from './page.mjs';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { memplan } from './memplan.mjs';

function cliPeaks(file, extra = []) {
  const out = memplan([
    'plan', `static/samples/${file}`, '--dim', 'batch=1',
    '--strategy', 'ge-block', '--strategy', 'greedy-size-best-fit', '--format', 'json', ...extra,
  ]);
  return JSON.parse(out).plans.map((p) => p.peak_bytes);
}

async function peak(page, i) {
  const dd = page.getByTestId(`pane${i}-peak`);
  await expect(dd).toBeVisible();
  return Number(await dd.getAttribute('data-bytes'));
}

test('the default sample plans to the same peaks as the CLI', async ({ page }) => {
  const [ge, packed] = cliPeaks('mobilenet_v2_randinit.stripped.onnx');
  // pane 2 opens on GE's runtime allocator: its allocator peak is `memplan simulate`'s, padded
  // as GE pads (`--padding ge`); the pane's headline peak is the span its offsets reach
  const runtime = JSON.parse(memplan([
    'simulate', 'static/samples/mobilenet_v2_randinit.stripped.onnx',
    '--dim', 'batch=1', '--allocator', 'ge-v2', '--align', '512', '--padding', 'ge', '--format', 'json',
  ])).allocators[0];
  expect(runtime.peak_bytes).toBeGreaterThan(ge);
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  expect(await peak(page, 0)).toBe(ge);
  await expect(page.getByTestId('pane1-strategy')).toHaveValue('runtime-ge-v2');
  await expect(page.getByTestId('pane1-sim-peak')).toHaveAttribute('data-bytes', String(runtime.peak_bytes));
  // the first view compares two answers that differ, and says why each pane is there
  expect(await peak(page, 1)).toBeGreaterThan(ge);
  await expect(page.getByTestId('pane0-why')).toContainText("GE's static plan");
  await expect(page.getByTestId('pane1-why')).toContainText("GE's own runtime allocator");
  // a packing chosen in pane 2 plans as the CLI's, and the reason goes (the user chose it)
  await packSecondPane(page);
  expect(await peak(page, 1)).toBe(packed);
  await expect(page.getByTestId('pane1-why')).toHaveCount(0);
  // the Blocks figure counts every block and gives GE's own (top-level) count beside it
  const plan = JSON.parse(memplan([
    'plan', 'static/samples/mobilenet_v2_randinit.stripped.onnx', '--dim', 'batch=1',
    '--strategy', 'ge-block', '--format', 'json',
  ])).plans[0];
  await expect(page.getByTestId('pane0-blocks')).toHaveText(`${plan.blocks.length} (${plan.ge.blocks} top-level)`);
});

test('changing the alignment of one pane changes its peak as the CLI says', async ({ page }) => {
  const at512 = cliPeaks('resnet50_randinit.stripped.onnx');
  const at32 = cliPeaks('resnet50_randinit.stripped.onnx', ['--align', '32']);
  await page.goto('/?sample=resnet50');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await packSecondPane(page);
  expect(await peak(page, 0)).toBe(at512[0]);
  expect(await peak(page, 1)).toBe(at512[1]);
  await page.getByTestId('pane0-align').selectOption('32');
  await expect(page.getByTestId('pane0-peak')).toHaveAttribute('data-bytes', String(at32[0]));
  // the other pane keeps its settings and its number
  expect(await peak(page, 1)).toBe(at512[1]);
});

test('a runtime allocator pane shows the same simulation as `memplan simulate`', async ({ page }) => {
  const out = memplan([
    'simulate', 'static/samples/mobilenet_v2_randinit.stripped.onnx',
    '--dim', 'batch=1', '--allocator', 'bfc', '--align', '512', '--format', 'json',
  ]);
  const bfc = JSON.parse(out).allocators[0];
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await page.getByTestId('add-pane').click();
  await page.getByTestId('pane2-strategy').selectOption('runtime-bfc');
  // the pane's default for a graph pads as GE does: `simulate --padding ge`
  const padded = JSON.parse(memplan([
    'simulate', 'static/samples/mobilenet_v2_randinit.stripped.onnx',
    '--dim', 'batch=1', '--allocator', 'bfc', '--align', '512', '--padding', 'ge', '--format', 'json',
  ])).allocators[0];
  await expect(page.getByTestId('pane2-sim-peak')).toHaveAttribute('data-bytes', String(padded.peak_bytes));
  await expect(page.getByTestId('pane2-allocs')).toHaveText(`${padded.allocations} / ${padded.frees}`);
  // the CLI's default simulates raw tensor sizes: no padding in this pane
  await page.locator('#pane2-pad').selectOption('none');
  await expect(page.getByTestId('pane2-peak')).toHaveAttribute('data-bytes', String(bfc.peak_bytes));
  await expect(page.getByTestId('pane2-allocs')).toHaveText(`${bfc.allocations} / ${bfc.frees}`);
  await expect(page.getByTestId('pane2-leaks')).toHaveText('none');
  await page.getByTestId('pane2').screenshot({ path: 'artifacts/runtime-pane.png' });
});

test('dynamic batch gears overlay as `memplan plan --batch` says', async ({ page }) => {
  const out = memplan([
    'plan', 'static/samples/resnet50_randinit.stripped.onnx',
    '--batch', '1,2,4,8', '--strategy', 'ge-block', '--strategy', 'greedy-size-best-fit', '--format', 'json',
  ]);
  const plans = JSON.parse(out).plans;
  await page.goto('/?sample=resnet50');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await packSecondPane(page);
  await setGears(page, '1,2,4,8');
  for (const i of [0, 1]) {
    const o = page.getByTestId(`pane${i}-overlay`);
    await expect(o).toHaveAttribute('data-overlay', String(plans[i].overlay_bytes));
    await expect(o).toHaveAttribute('data-side', String(plans[i].side_by_side_bytes));
    await expect(page.getByTestId(`pane${i}-peak`)).toHaveAttribute('data-bytes', String(plans[i].peak_bytes));
  }
  // the views show one gear at a time, the largest first: every tensor live at the step has
  // the shown batch as its leading dim
  const shapes = () => page.getByTestId('tensor-table').locator('tbody tr td:nth-child(3)').allTextContents();
  await expect(page.getByTestId('gear')).toHaveValue('8');
  await expect.poll(async () => (await shapes()).length).toBeGreaterThan(0);
  expect((await shapes()).every((t) => t.startsWith('8×'))).toBe(true);
  await page.getByTestId('gear').selectOption('2');
  await expect.poll(async () => (await shapes()).every((t) => t.startsWith('2×'))).toBe(true);
  await page.screenshot({ path: 'artifacts/gears.png', fullPage: true });
  // the link keeps the gears
  const url = page.url();
  await page.goto('about:blank');
  await page.goto(url);
  await expect(page.getByTestId('gears')).toHaveValue('1,2,4,8');
  await expect(page.getByTestId('gear')).toHaveValue('2');
});

test('the exact solver plans in a background worker and agrees with the CLI', async ({ page }) => {
  const out = memplan([
    'plan', 'static/samples/resnet50_randinit.stripped.onnx',
    '--dim', 'batch=1', '--strategy', 'optimal', '--format', 'json',
  ]);
  const optimal = JSON.parse(out).plans[0];
  expect(optimal.search.proven_optimal).toBe(true);
  expect(optimal.search.best_peak).toBe(optimal.peak_bytes);
  // the worker is started only when a pane needs it: here, at once, for pane 2's runtime
  // allocator (a graph's default), then it plans the exact solver too
  const worker = page.waitForEvent('worker');
  await page.goto('/?sample=resnet50');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await worker;
  await page.getByTestId('pane1-strategy').selectOption('optimal');
  await expect(page.getByTestId('pane1-peak')).toHaveAttribute('data-bytes', String(optimal.peak_bytes));
  // the page says why, as the CLI does: the same proof, found with the same search
  await expect(page.getByTestId('pane1-notes')).toContainText(optimal.notes[0].split('; ')[0]);
  await expect(page.getByTestId('pane0-notes')).toContainText('GE hybrid: binary-block');
  // the page stayed usable: the other pane kept its plan
  await expect(page.getByTestId('pane0-peak')).toBeVisible();
});

test('GE streams and memory types: columns, one arena bar per type and the 400 MiB switch, as the CLI says', async ({ page }) => {
  const plan = (extra) => JSON.parse(memplan([
    'plan', 'static/samples/ge-streams.json', '--strategy', 'ge-block', '--format', 'json', ...extra,
  ])).plans[0];
  const one = plan(['--dim', 'batch=1']);
  expect(one.arenas.map((a) => a.name)).toEqual(['HBM', 'P2P_DDR']);
  await page.goto('/?sample=ge-streams');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  // one bar per memory type, with the CLI's bytes; the headline peak is HBM's
  const rows = page.getByTestId('pane0-arenas').locator('.arena-row');
  await expect(rows).toHaveCount(2);
  for (const [k, a] of one.arenas.entries()) {
    await expect(rows.nth(k)).toHaveAttribute('data-type', a.name);
    await expect(rows.nth(k)).toHaveAttribute('data-bytes', String(a.bytes));
  }
  await expect(page.getByTestId('pane0-peak')).toHaveAttribute('data-bytes', String(one.arenas[0].bytes));
  // budgets and the comparison with other panes count every arena (the P2P tensor too)
  const all = one.arenas.reduce((a, x) => a + x.bytes, 0);
  await expect(page.getByTestId('pane0-device')).toHaveAttribute('data-bytes', String(all));
  // the table gains stream and memory columns for this model (not for plain ONNX models)
  const head = page.getByTestId('tensor-table').locator('thead th');
  await expect(head.filter({ hasText: /^stream$/ })).toHaveCount(1);
  await expect(head.filter({ hasText: /^memory$/ })).toHaveCount(1);
  const memory = await page.getByTestId('tensor-table').locator('td[data-col="memory"]').allTextContents();
  expect(memory.length).toBeGreaterThan(0);
  expect(memory.every((m) => m === 'HBM' || m === 'P2P_DDR')).toBe(true);
  // the 400 MiB switch appears with gears, for GE panes only, and travels in the link
  await expect(page.getByTestId('pane0-expandable')).toHaveCount(0);
  await setGears(page, '1,4');
  await expect(page.getByTestId('pane1-expandable')).toHaveCount(0);
  const split = plan(['--batch', '1,4', '--expandable-memory']);
  await page.getByTestId('pane0-expandable').check();
  await expect(page.getByTestId('pane0-peak')).toHaveAttribute('data-bytes', String(split.peak_bytes));
  await expect(page.getByTestId('pane0-overlay')).toHaveAttribute('data-overlay', String(split.overlay_bytes));
  // the gap is measured in one gear (the gears overlay): here the largest, 4
  await expect(page.getByTestId('pane0-gap-sentence')).toContainText('of gear 4, the busiest');
  const url = page.url();
  await page.goto('about:blank');
  await page.goto(url);
  await expect(page.getByTestId('pane0-expandable')).toBeChecked();
  await page.getByTestId('pane0').screenshot({ path: 'artifacts/ge-streams-pane.png' });
});

test('views that alias their input: the switch plans as `memplan plan --alias-views` and travels in the link', async ({ page }) => {
  const run = (extra) => JSON.parse(memplan([
    'plan', 'static/samples/vit_b_16_randinit.stripped.onnx', '--dim', 'batch=1',
    '--strategy', 'ge-block', '--strategy', 'greedy-size-best-fit', '--format', 'json', ...extra,
  ]));
  const off = run([]);
  const on = run(['--alias-views']);
  expect(on.problem.aliased_views).toBeGreaterThan(0);
  await page.goto('/?sample=vit_b_16');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await packSecondPane(page);
  await expect(page.getByTestId('alias-views')).not.toBeChecked();
  await expect(page.getByTestId('views-aliased')).toHaveCount(0);
  for (const i of [0, 1]) {
    await expect(page.getByTestId(`pane${i}-peak`)).toHaveAttribute('data-bytes', String(off.plans[i].peak_bytes));
  }
  await page.getByTestId('alias-views').check();
  await expect(page.getByTestId('views-aliased')).toHaveAttribute('data-bytes', String(on.problem.aliased_view_bytes));
  await expect(page.getByTestId('views-aliased')).toContainText(`${on.problem.aliased_views} tensors share`);
  for (const i of [0, 1]) {
    await expect(page.getByTestId(`pane${i}-peak`)).toHaveAttribute('data-bytes', String(on.plans[i].peak_bytes));
  }
  const url = page.url();
  await page.goto('about:blank');
  await page.goto(url);
  await expect(page.getByTestId('alias-views')).toBeChecked();
  await expect(page.getByTestId('pane1-peak')).toHaveAttribute('data-bytes', String(on.plans[1].peak_bytes));
});

test('the op order: GE depth-first plans as `memplan plan --schedule ge-dfs` and travels in the link', async ({ page }) => {
  // x feeds A and B; B also reads the weight w; C reads a; D reads b and c. File order runs
  // A, B, C, D, so the two 1 MiB tensors a and b are live together at B; GE's depth-first
  // sort (compute_graph.cc DFSTopologicalSorting, the Const w below the Data x) runs
  // A, C, B, D, so a dies at C before b is born.
  const graph = JSON.stringify({
    format: 'memplan.graph/1', name: 'order',
    tensors: [
      { name: 'x', bytes: 64 }, { name: 'w', bytes: 64, kind: 'weight' },
      { name: 'a', bytes: 1048576 }, { name: 'b', bytes: 1048576 },
      { name: 'c', bytes: 64 }, { name: 'd', bytes: 64 },
    ],
    ops: [
      { name: 'A', inputs: ['x'], outputs: ['a'] },
      { name: 'B', inputs: ['x', 'w'], outputs: ['b'] },
      { name: 'C', inputs: ['a'], outputs: ['c'] },
      { name: 'D', inputs: ['b', 'c'], outputs: ['d'] },
    ],
    inputs: ['x'], outputs: ['d'],
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memplan-order-'));
  const file = path.join(dir, 'order.json');
  fs.writeFileSync(file, graph);
  const run = (extra) => JSON.parse(memplan([
    'plan', file, '--strategy', 'ge-block', '--strategy', 'greedy-size-best-fit', '--format', 'json', ...extra,
  ])).plans.map((p) => p.peak_bytes);
  const inFile = run([]);
  const dfs = run(['--schedule', 'ge-dfs']);
  expect(dfs[1]).toBeLessThan(inFile[1]);
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await packSecondPane(page);
  await page.getByTestId('file').setInputFiles({ name: 'order.json', mimeType: 'application/json', buffer: Buffer.from(graph) });
  await expect(page.getByTestId('pane1-peak')).toHaveAttribute('data-bytes', String(inFile[1]));
  await expect(page.getByTestId('schedule')).toHaveValue('');
  await page.getByTestId('schedule').selectOption('ge-dfs');
  for (const i of [0, 1]) {
    await expect(page.getByTestId(`pane${i}-peak`)).toHaveAttribute('data-bytes', String(dfs[i]));
  }
  const url = page.url();
  await page.goto('about:blank');
  await page.goto(url);
  await expect(page.getByTestId('schedule')).toHaveValue('ge-dfs');
  await expect(page.getByTestId('pane1-peak')).toHaveAttribute('data-bytes', String(dfs[1]));
  await page.getByTestId('schedule').selectOption('file');
  await expect(page.getByTestId('pane1-peak')).toHaveAttribute('data-bytes', String(inFile[1]));
});

test('the op order: least memory plans as `memplan plan --schedule memory` and travels in the link', async ({ page }) => {
  // the graph of the test above: file order A, B, C, D holds a and b (1 MiB each) together
  // at B; the memory-aware order (exact search, proven) runs A, C, B, D as GE's does.
  const graph = JSON.stringify({
    format: 'memplan.graph/1', name: 'order',
    tensors: [
      { name: 'x', bytes: 64 }, { name: 'w', bytes: 64, kind: 'weight' },
      { name: 'a', bytes: 1048576 }, { name: 'b', bytes: 1048576 },
      { name: 'c', bytes: 64 }, { name: 'd', bytes: 64 },
    ],
    ops: [
      { name: 'A', inputs: ['x'], outputs: ['a'] },
      { name: 'B', inputs: ['x', 'w'], outputs: ['b'] },
      { name: 'C', inputs: ['a'], outputs: ['c'] },
      { name: 'D', inputs: ['b', 'c'], outputs: ['d'] },
    ],
    inputs: ['x'], outputs: ['d'],
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memplan-order-'));
  const file = path.join(dir, 'order.json');
  fs.writeFileSync(file, graph);
  const run = (extra) => JSON.parse(memplan([
    'plan', file, '--strategy', 'ge-block', '--strategy', 'greedy-size-best-fit', '--format', 'json', ...extra,
  ]));
  const inFile = run([]).plans.map((p) => p.peak_bytes);
  const planned = run(['--schedule', 'memory']);
  expect(planned.problem.op_order).toEqual(['A', 'C', 'B', 'D']);
  const mem = planned.plans.map((p) => p.peak_bytes);
  expect(mem[1]).toBeLessThan(inFile[1]);
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await packSecondPane(page);
  await page.getByTestId('file').setInputFiles({ name: 'order.json', mimeType: 'application/json', buffer: Buffer.from(graph) });
  await expect(page.getByTestId('pane1-peak')).toHaveAttribute('data-bytes', String(inFile[1]));
  await page.getByTestId('schedule').selectOption('memory');
  for (const i of [0, 1]) {
    await expect(page.getByTestId(`pane${i}-peak`)).toHaveAttribute('data-bytes', String(mem[i]));
  }
  const url = page.url();
  await page.goto('about:blank');
  await page.goto(url);
  await expect(page.getByTestId('schedule')).toHaveValue('memory');
  await expect(page.getByTestId('pane1-peak')).toHaveAttribute('data-bytes', String(mem[1]));
});

test('the two-streams sample, whose graph input a Data op writes, plans in GE depth-first order as the CLI does', async ({ page }) => {
  // a new user found it refused ("waits for the op at step 7"), the model gone and the op
  // order control with it: the Data op is GE's Data node, popped first
  const run = (extra) => JSON.parse(memplan([
    'plan', 'static/samples/ge-streams.json', '--strategy', 'ge-block', '--strategy', 'greedy-size-best-fit',
    '--format', 'json', ...extra,
  ])).plans.map((p) => p.peak_bytes);
  const dfs = run(['--schedule', 'ge-dfs']);
  await page.goto('/');
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
  await packSecondPane(page);
  await page.getByTestId('sample').selectOption('ge-streams');
  await expect(page.getByTestId('model-name')).toHaveText('ge-streams');
  await page.getByTestId('schedule').selectOption('ge-dfs');
  for (const i of [0, 1]) {
    await expect(page.getByTestId(`pane${i}-peak`)).toHaveAttribute('data-bytes', String(dfs[i]));
  }
  await expect(page.getByTestId('schedule')).toHaveValue('ge-dfs');
  await expect(page.getByTestId('load-error')).toHaveCount(0);
});
