// A TFLite model on the page (issue 25): opened by picker, host message and drop, planned in
// every pane under TFLM's rules (tflm-greedy against optimal), its plan downloaded as a
// planned .tflite that TFLM itself runs (the TFLM oracle, PyPI's tflite-micro wheel) and as a
// C header; a refused export and a truncated file are messages, the page stays alive.
import { test, expect } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { memplan, root } from './memplan.mjs';

const models = join(root, 'testdata/models/tflite/tflite-micro');
const personDetect = join(models, 'person_detect.tflite');
const helloWorld = join(models, 'hello_world_int8.tflite');
// TFLM's head for these models, measured with the tflite-micro wheel on x86-64 (issue 25's
// table); both equal the max-live bound, so no plan can be smaller
const PERSON_DETECT_HEAD = 55_296;
const HELLO_WORLD_HEAD = 32;
const work = join(process.env.CARGO_TARGET_DIR ?? join(root, 'target'), 'e2e-tflite');

async function ready(page) {
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
}

// waits for pane i's peak to be `bytes` (a pane still showing the previous model's plan is
// waited out, not read)
async function expectPeak(page, i, bytes) {
  await expect(page.getByTestId(`pane${i}-peak`)).toHaveAttribute('data-bytes', String(bytes), { timeout: 60_000 });
}

async function download(page, testid) {
  const [d] = await Promise.all([page.waitForEvent('download'), page.getByTestId(testid).click()]);
  return { name: d.suggestedFilename(), bytes: readFileSync(await d.path()) };
}

test('a .tflite plans on TFLM\'s rules and its downloaded plan runs in TFLM with the pane\'s head', async ({ page }) => {
  test.setTimeout(900_000); // the oracle's first run makes its venv (pip)
  page.on('pageerror', (e) => { throw new Error(`page error: ${e.message}`); });
  await page.goto('/');
  await ready(page);
  // the built-in sample is a GE graph: GE's switches and run-time views are there
  await expect(page.getByTestId('pane0-sections')).toHaveCount(1);
  await expect(page.getByTestId('pane0-atomic-central')).toHaveCount(1);
  await expect(page.getByTestId('pane0-zero-copy-io')).toHaveCount(1);
  await page.getByTestId('file').setInputFiles(personDetect);
  const summary = page.locator('section.summary');
  await expect(summary).toContainText('person_detect.tflite');
  await expect(summary).toContainText('TFLite');

  // the comparison a TFLite model opens on: TFLM's own planner against the best packing
  await expect(page.getByTestId('pane0-strategy')).toHaveValue('tflm-greedy');
  await expect(page.getByTestId('pane1-strategy')).toHaveValue('optimal');
  await expectPeak(page, 0, PERSON_DETECT_HEAD);
  await expectPeak(page, 1, PERSON_DETECT_HEAD);
  // the CLI plans the same file to the same head
  const cli = JSON.parse(memplan(['plan', personDetect, '-s', 'tflm-greedy', '--format', 'json']));
  expect(cli.plans[0].peak_bytes).toBe(PERSON_DETECT_HEAD);

  // the arena to write: the head, the tail as far as the file tells
  const arena = page.getByTestId('pane0-tflm-arena');
  await expect(arena).toHaveAttribute('data-head', String(PERSON_DETECT_HEAD));
  await expect(arena).toContainText('kTensorArenaSize: at least the head, 55,296 B');
  await expect(arena).toContainText('Persistent tail');
  // TFLM's rules, not GE's: no atomic-clean policy, zero-copy I/O (off) or GE run-time views
  for (const i of [0, 1]) {
    await expect(page.getByTestId(`pane${i}-sections`)).toHaveCount(0);
    await expect(page.getByTestId(`pane${i}-atomic-central`)).toHaveCount(0);
    await expect(page.getByTestId(`pane${i}-zero-copy-io`)).toHaveCount(0);
  }

  // the planned model: the CLI's --emit-tflite bytes, and TFLM runs it at the pane's head
  // with outputs bit-identical to the original's
  const planned = await download(page, 'pane0-download-tflite');
  expect(planned.name).toBe('person_detect.tflm-greedy.tflite');
  mkdirSync(work, { recursive: true });
  const downloaded = join(work, planned.name);
  writeFileSync(downloaded, planned.bytes);
  const fromCli = join(work, 'person_detect.cli.tflite');
  memplan(['plan', personDetect, '-s', 'tflm-greedy', '--emit-tflite', fromCli]);
  expect(planned.bytes.equals(readFileSync(fromCli))).toBe(true);
  // throws (failing the test) unless the oracle exits 0
  execFileSync(join(root, 'scripts/tflm-oracle/run'),
    ['--verify', downloaded, '--original', personDetect, '--peak', String(PERSON_DETECT_HEAD)],
    { cwd: root, stdio: 'inherit' });

  const header = await download(page, 'pane0-download-header');
  expect(header.name).toBe('person_detect.tflm-greedy.h');
  expect(header.bytes.toString('utf8')).toContain(`#define MEMPLAN_ARENA_HEAD_BYTES ${PERSON_DETECT_HEAD}u`);

  // 512 B sizes are not TFLM's: the export is refused in the pane, no download (no-reuse, whose
  // peak the alignment changes, so that the click waits for the 512 B plan)
  const noReuse512 = JSON.parse(memplan(['plan', personDetect, '-s', 'no-reuse', '--align', '512', '--format', 'json'])).plans[0].peak_bytes;
  await page.getByTestId('pane1-strategy').selectOption('no-reuse');
  await page.getByTestId('pane1-align').selectOption('512');
  await expectPeak(page, 1, noReuse512);
  await page.getByTestId('pane1-download-tflite').click();
  await expect(page.getByTestId('pane1-tflm-error')).toContainText('Cannot export to TFLM');
  await expectPeak(page, 0, PERSON_DETECT_HEAD);
});

test('a truncated .tflite gets one clear error and the open model stays', async ({ page }) => {
  page.on('pageerror', (e) => { throw new Error(`page error: ${e.message}`); });
  await page.goto('/');
  await ready(page);
  await page.getByTestId('file').setInputFiles(personDetect);
  await expect(page.locator('section.summary')).toContainText('person_detect.tflite');
  await expectPeak(page, 0, PERSON_DETECT_HEAD);
  const cut = readFileSync(personDetect).subarray(0, 3000);
  await page.getByTestId('file').setInputFiles({ name: 'cut.tflite', mimeType: 'application/octet-stream', buffer: cut });
  const err = page.getByTestId('load-error');
  await expect(err).toHaveCount(1);
  await expect(err).toContainText('cut.tflite');
  await expect(err).toContainText('still showing');
  await expect(page.locator('section.summary')).toContainText('person_detect.tflite');
  await expectPeak(page, 0, PERSON_DETECT_HEAD);
});

test('a .tflite sent by a host page or dropped opens the same way', async ({ page }) => {
  await page.goto('/');
  await ready(page);
  const bytes = [...readFileSync(helloWorld)];
  await page.evaluate((b) => window.postMessage({
    type: 'memplan:model', name: 'hello_world_int8.tflite', bytes: new Uint8Array(b),
  }, '*'), bytes);
  await expect(page.locator('section.summary')).toContainText('hello_world_int8.tflite');
  await expect(page.getByTestId('pane0-strategy')).toHaveValue('tflm-greedy');
  await expectPeak(page, 0, HELLO_WORLD_HEAD);

  const dt = await page.evaluateHandle((b) => {
    const d = new DataTransfer();
    d.items.add(new File([new Uint8Array(b)], 'dropped.tflite'));
    return d;
  }, [...readFileSync(personDetect)]);
  await page.locator('.app').dispatchEvent('drop', { dataTransfer: dt });
  await expect(page.locator('section.summary')).toContainText('dropped.tflite');
  await expectPeak(page, 0, PERSON_DETECT_HEAD);

  // an ONNX model after it: the panes go back to GE's defaults and comparison
  await page.getByTestId('sample').selectOption('ppocr_cls');
  await expect(page.locator('section.summary')).toContainText('ppocr_mobile_v2_cls');
  await expect(page.getByTestId('pane0-strategy')).toHaveValue('ge-block');
  await expect(page.getByTestId('pane0-align')).toHaveValue('512');
  await expect(page.getByTestId('pane0-tflm')).toHaveCount(0);
  await expect(page.getByTestId('tflm-note')).toHaveCount(0);
});
