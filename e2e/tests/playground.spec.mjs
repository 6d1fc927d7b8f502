// The playground as a user meets it: a real ONNX model planned by ge-block and a packing
// strategy side by side, settings changed, the view shared by URL and reopened, files opened
// by picker and by drop, bad files refused with a message while the page stays alive.
import { test, expect } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { memplan } from './memplan.mjs';
import { packSecondPane } from './page.mjs';

const samples = fileURLToPath(new URL('../../static/samples/', import.meta.url));

// Reference figures of shared/models/README.md (onnxruntime shapes, batch 1, raw sizes).
const MOBILENET_LB = 9_633_792;
const MOBILENET_NO_REUSE = 52_617_504;
const RESNET_LB = 9_633_792;

async function ready(page) {
  await expect(page.locator('html[data-ready]')).toHaveCount(1);
}

async function peak(page, i) {
  const dd = page.getByTestId(`pane${i}-peak`);
  await expect(dd).toBeVisible();
  return Number(await dd.getAttribute('data-bytes'));
}

test.beforeEach(async ({ page }) => {
  page.on('pageerror', (e) => { throw new Error(`page error: ${e.message}`); });
});

test('opens with a real ONNX model: GE\'s static plan against GE\'s runtime allocator, saying why', async ({ page }) => {
  await page.goto('/');
  await ready(page);
  await expect(page.getByTestId('sample')).toHaveValue('mobilenet_v2');
  const summary = page.locator('section.summary');
  await expect(summary).toContainText('ONNX');
  await expect(summary).toContainText('100 steps');
  await expect(page.getByTestId('pane0-strategy')).toHaveValue('ge-block');
  await expect(page.getByTestId('pane1-strategy')).toHaveValue('runtime-ge-v2');
  const ge = await peak(page, 0);
  const runtime = await peak(page, 1);
  // Every plan lies between the live-set lower bound and the no-reuse total.
  for (const p of [ge, runtime]) {
    expect(p).toBeGreaterThanOrEqual(MOBILENET_LB);
    expect(p).toBeLessThan(MOBILENET_NO_REUSE + 512 * 200);
  }
  // The first view shows what planning ahead is for: on MobileNetV2 GE's runtime allocator
  // holds more than GE's static plan (a second static packing would tie with ge-block), and
  // each pane says why it is there.
  expect(runtime).toBeGreaterThan(ge);
  await expect(page.getByTestId('pane0-why')).toBeVisible();
  await expect(page.getByTestId('pane1-why')).toContainText('what planning ahead saves');
  await expect(page.getByTestId('pane0').locator('.ok')).toHaveText('✓ valid');
  await expect(page.getByTestId('timeline').locator('canvas[data-largest]')).toBeVisible();
  await expect(page.getByTestId('tensor-table').locator('tbody tr').first()).toBeVisible();
});

test('the summary shows the reference lower bound and scales with the batch dim', async ({ page }) => {
  await page.goto('/');
  await ready(page);
  const summary = page.locator('section.summary');
  await expect(summary).toContainText(`(${MOBILENET_LB} B)`);
  await page.getByTestId('dim-batch').fill('2');
  await page.getByTestId('dim-batch').dispatchEvent('change');
  // Every activation of MobileNetV2 carries the batch dim: the bound doubles exactly.
  await expect(summary).toContainText(`(${2 * MOBILENET_LB} B)`);
});

test('a shared link reopens the exact view', async ({ page, context }) => {
  await page.goto('/');
  await ready(page);
  await page.getByTestId('sample').selectOption('resnet50');
  await expect(page.locator('section.summary')).toContainText(`(${RESNET_LB} B)`);
  await page.getByTestId('pane1-strategy').selectOption('optimal');
  await page.getByTestId('pane1-align').selectOption('64');
  await page.getByTestId('add-pane').click();
  await page.getByTestId('pane2-strategy').selectOption('ge-max-block');
  const peaks = [await peak(page, 0), await peak(page, 1), await peak(page, 2)];
  await expect(page).toHaveURL(/#v=1&z=/);
  const url = page.url();

  const other = await context.newPage();
  await other.goto(url);
  await ready(other);
  await expect(other.getByTestId('sample')).toHaveValue('resnet50');
  await expect(other.getByTestId('pane1-strategy')).toHaveValue('optimal');
  await expect(other.getByTestId('pane1-align')).toHaveValue('64');
  await expect(other.getByTestId('pane2-strategy')).toHaveValue('ge-max-block');
  expect([await peak(other, 0), await peak(other, 1), await peak(other, 2)]).toEqual(peaks);
});

test('a broken link says so and falls back to the default sample', async ({ page }) => {
  await page.goto('/#v=1&z=not-a-valid-payload');
  await expect(page.getByTestId('link-error')).toBeVisible();
  await ready(page);
  await expect(page.getByTestId('sample')).toHaveValue('mobilenet_v2');
});

test('the file picker opens a real ONNX model', async ({ page }) => {
  await page.goto('/');
  await ready(page);
  await page.getByTestId('file').setInputFiles(`${samples}/resnet50_randinit.stripped.onnx`);
  const summary = page.locator('section.summary');
  await expect(summary).toContainText('resnet50_randinit.stripped.onnx');
  await expect(summary).toContainText(`(${RESNET_LB} B)`);
  await expect(summary).toContainText('122 steps');
});

test('a dropped file is opened', async ({ page }) => {
  await page.goto('/');
  await ready(page);
  const csv = readFileSync(`${samples}/tetris.csv`, 'utf8');
  const dt = await page.evaluateHandle((text) => {
    const d = new DataTransfer();
    d.items.add(new File([text], 'dropped.csv', { type: 'text/csv' }));
    return d;
  }, csv);
  await page.locator('.app').dispatchEvent('drop', { dataTransfer: dt });
  await expect(page.locator('section.summary')).toContainText('dropped.csv');
  await expect(page.locator('section.summary')).toContainText('MiniMalloc CSV');
});

test('bad files get a message naming the file, and the page keeps working', async ({ page }) => {
  await page.goto('/');
  await ready(page);
  const bad = [
    { name: 'garbage.onnx', mimeType: 'application/octet-stream', buffer: Buffer.from([0xff, 0xff, 0xff, 0x01, 0x02, 0x03]) },
    { name: 'cut.onnx', mimeType: 'application/octet-stream', buffer: readFileSync(`${samples}/resnet50_randinit.stripped.onnx`).subarray(0, 3000) },
    { name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from('{"format": "memplan.graph/1", "tensors": [') },
    { name: 'bad.csv', mimeType: 'text/csv', buffer: Buffer.from('id,lower,upper,size\n0,5,2,10\n') },
    { name: 'empty.onnx', mimeType: 'application/octet-stream', buffer: Buffer.alloc(0) },
  ];
  const before = await peak(page, 0);
  for (const f of bad) {
    await page.getByTestId('file').setInputFiles(f);
    await expect(page.getByTestId('load-error')).toContainText(f.name);
    // the open model stays on screen, and the message says so
    await expect(page.getByTestId('load-error')).toContainText('still showing');
    await expect(page.locator('section.summary')).toContainText('mobilenet_v2');
    expect(await peak(page, 0)).toBe(before);
  }
  await page.getByTestId('sample').selectOption('ppocr_cls');
  await expect(page.getByTestId('load-error')).toHaveCount(0);
  await expect(page.locator('section.summary')).toContainText('ppocr_mobile_v2_cls');
  await peak(page, 0);
});

test('the embed view is read-only and links back to the playground', async ({ page }) => {
  await page.goto('/');
  await ready(page);
  await page.getByTestId('embed').click();
  const snippet = await page.getByTestId('embed-snippet').inputValue();
  const src = snippet.match(/src="([^"]+)"/)[1].replaceAll('&amp;', '&');
  await page.goto(src);
  await ready(page);
  await expect(page.locator('.app.embed')).toBeVisible();
  await expect(page.getByTestId('open-in-playground')).toBeVisible();
  await expect(page.getByTestId('pane0-strategy')).toHaveCount(0);
  await expect(page.getByTestId('pane0-peak')).toBeVisible();
});

test('a memory budget says which plans fit, draws its line and travels with the link', async ({ page, context }) => {
  await page.goto('/?sample=resnet50');
  await ready(page);
  // ResNet-50's raw lower bound is 9,633,792 B; ge-block pads and aligns to 10,242,048 B
  // (max-block, as the CLI prints); so does optimal while the graph's input and output are
  // zero-copy user buffers (never reused), and with them reused it reaches 9,635,328 B.
  await page.getByTestId('pane1-strategy').selectOption('optimal');
  await expect(page.getByTestId('pane1-peak')).toHaveAttribute('data-bytes', '10242048');
  await page.locator('label', { hasText: 'zero-copy I/O' }).nth(1).locator('input').uncheck();
  await expect(page.getByTestId('pane1-peak')).toHaveAttribute('data-bytes', '9635328');
  await page.getByTestId('budget').fill('9.5MiB');
  await page.getByTestId('budget').press('Enter');
  await page.getByTestId('budget').blur();
  // 9.5 MiB = 9,961,472 B
  await expect(page.getByTestId('budget')).toHaveValue('9.5 MiB');
  await expect(page.getByTestId('pane0-budget')).toHaveAttribute('data-fits', 'false');
  await expect(page.getByTestId('pane0-budget')).toContainText('over by');
  await expect(page.getByTestId('pane1-budget')).toHaveAttribute('data-fits', 'true');
  await expect(page.locator('svg', { hasText: 'budget 9.50 MiB' }).first()).toBeVisible();
  await expect(page).toHaveURL(/#v=1&z=/);
  const other = await context.newPage();
  await other.goto(page.url());
  await ready(other);
  await expect(other.getByTestId('budget')).toHaveValue('9.5 MiB');
  await expect(other.getByTestId('pane1-budget')).toHaveAttribute('data-fits', 'true');

  await page.getByTestId('budget').fill('9 MB');
  await page.getByTestId('budget').blur();
  await expect(page.getByTestId('budget-infeasible')).toContainText('no plan can fit');
  await page.getByTestId('budget').fill('lots');
  await page.getByTestId('budget').blur();
  await expect(page.getByTestId('notice')).toContainText('unknown unit');
  await expect(page.getByTestId('pane0-peak')).toBeVisible();
});

// A MiniMalloc CSV of `n` pseudo-random buffers: far over the 8 KB a link carries inline.
// `n` buffers named by `k` pseudo-random hex digits each: 12,000 of 200 digits deflate to
// about 1.4 MB, over the 1.5 MB of base64 a link carries (share.rs MAX_LINK).
function bigCsv(n, k = 8) {
  let x = 12345;
  const rnd = () => { x = (x * 1103515245 + 12345) % 2147483648; return x; };
  const hex = () => { let s = ''; while (s.length < k) s += rnd().toString(16).padStart(8, '0'); return s.slice(0, k); };
  const rows = ['id,lower,upper,size'];
  for (let i = 0; i < n; i++) {
    const lower = rnd() % 200;
    rows.push(`t${i}_${hex()},${lower},${lower + 1 + (rnd() % 50)},${1 + (rnd() % 100000)}`);
  }
  return `${rows.join('\n')}\n`;
}

test('an embed or link of a model too large to carry even lowered says it shows the default sample instead', async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto('/');
  await ready(page);
  await page.getByTestId('file').setInputFiles({ name: 'big-model.csv', mimeType: 'text/csv', buffer: Buffer.from(bigCsv(12_000, 200)) });
  await expect(page.locator('section.summary')).toContainText('big-model.csv', { timeout: 60_000 });
  // the Embed button warns, as Copy link does
  await page.getByTestId('embed').click();
  await expect(page.getByTestId('embed-warning')).toContainText('too large to carry, even as its lowered problem');
  await expect(page.getByTestId('embed-warning')).toContainText('default sample');
  const snippet = await page.getByTestId('embed-snippet').inputValue();
  expect(snippet).toContain('title="memplan: big-model.csv (model not included)"');
  const src = snippet.match(/src="([^"]+)"/)[1].replaceAll('&amp;', '&');
  await page.getByRole('button', { name: 'Close', exact: true }).click();
  await expect(page.getByTestId('notice')).toContainText('too large to carry, even as its lowered problem');
  const full = page.url();
  expect(full).toMatch(/#v=1&z=/);

  // the embed says, in the frame, that the model was left out and what is shown instead
  await page.goto(src);
  await ready(page);
  await expect(page.locator('.app.embed')).toBeVisible();
  const missing = page.getByTestId('model-missing');
  await expect(missing).toContainText('does not include its model, big-model.csv');
  await expect(missing).toContainText('default sample, MobileNetV2');
  await expect(page.getByTestId('pane0-peak')).toBeVisible();
  // and so does the full page it opens, and the page's own link
  const open = await page.getByTestId('open-in-playground').getAttribute('href');
  for (const url of [open, full]) {
    await page.goto('about:blank');
    await page.goto(url);
    await ready(page);
    await expect(page.getByTestId('model-missing')).toContainText('big-model.csv');
    await expect(page.getByTestId('model-missing')).toContainText('default sample');
    await expect(page.getByTestId('sample')).toHaveValue('mobilenet_v2');
  }
  // an embed made from this stand-in still warns, and still leaves the model out
  await page.getByTestId('embed').click();
  await expect(page.getByTestId('embed-warning')).toContainText('did not include it');
  await page.getByRole('button', { name: 'Close', exact: true }).click();
  // loading a model clears the banner
  await page.getByTestId('sample').selectOption('resnet50');
  await expect(page.locator('section.summary')).toContainText('122 steps');
  await expect(page.getByTestId('model-missing')).toHaveCount(0);
});

for (const bad of ['cycle.json', 'garbage.csv']) {
  test(`after a CSV and a failed load (${bad}), an ONNX model gets GE defaults again`, async ({ page }) => {
    await page.goto('/');
    await ready(page);
    await page.getByTestId('file').setInputFiles(`${samples}/tetris.csv`);
    await expect(page.locator('section.summary')).toContainText('MiniMalloc CSV');
    await expect(page.getByTestId('pane0-align')).toHaveValue('custom');
    const body = bad.endsWith('.json')
      ? '{"format":"memplan.graph/1","name":"cyc","tensors":[{"name":"a","bytes":100},{"name":"b","bytes":200}],"ops":[{"name":"o1","type":"X","inputs":["b"],"outputs":["a"]},{"name":"o2","type":"X","inputs":["a"],"outputs":["b"]}],"inputs":[],"outputs":["b"]}'
      : 'garbage\n';
    await page.getByTestId('file').setInputFiles({ name: bad, mimeType: 'text/plain', buffer: Buffer.from(body) });
    await expect(page.getByTestId('load-error')).toContainText(bad);
    await page.getByTestId('file').setInputFiles(`${samples}/resnet50_randinit.stripped.onnx`);
    await expect(page.locator('section.summary')).toContainText('122 steps');
    // as a fresh page gives: 512 B alignment and GE padding, GE's runtime allocator in pane 2
    // (the CSV's plain packing was that kind's default, not a choice)
    await expect(page.getByTestId('pane0-align')).toHaveValue('512');
    await expect(page.getByTestId('pane1-align')).toHaveValue('512');
    await expect(page.getByTestId('pane1-strategy')).toHaveValue('runtime-ge-v2');
    await expect(page.getByTestId('pane0-peak')).toHaveAttribute('data-bytes', '10242048');
    await expect(page.getByTestId('pane1-peak')).toHaveAttribute('data-bytes', '10420736');
  });
}

test('a known extension decides the parser; content is sniffed only without one', async ({ page }) => {
  await page.goto('/');
  await ready(page);
  const open = (name, text) => page.getByTestId('file').setInputFiles({ name, mimeType: 'application/octet-stream', buffer: Buffer.from(text) });
  await open('garbage.csv', 'garbage\n');
  const err = page.getByTestId('load-error');
  // the CLI's message for the same file
  await expect(err).toContainText("garbage.csv: line 1: header 'garbage' must name the columns id, lower, upper, size");
  await expect(err).not.toContainText('ONNX');
  await open('deep.json', `${'['.repeat(3000)}${']'.repeat(3000)}`);
  await expect(err).toContainText('deep.json: ');
  await expect(err).not.toContainText('protobuf');
  await open('plan.json', '{"format":"memplan.plan/1","plans":[]}');
  await expect(err).toContainText('this is a plan');
  // no extension: the content says it is a CSV
  await open('buffers', readFileSync(`${samples}/tetris.csv`, 'utf8'));
  await expect(err).toHaveCount(0);
  await expect(page.locator('section.summary')).toContainText('MiniMalloc CSV');
  await peak(page, 0);
});

test('dims a file leaves unnamed stay unknown, as in the CLI, until the user binds them', async ({ page }) => {
  // ppocr's input is [?, 3, ?, ?] with no names: the CLI plans only what does not depend on
  // them and counts the rest as of unknown size; the page used to bind all three to 1
  const f = 'static/samples/ppocr_mobile_v2_cls.stripped.onnx';
  const cli = (extra) => JSON.parse(memplan(['plan', f, '--strategy', 'ge-block', '--strategy', 'greedy-size-best-fit', '--format', 'json', ...extra]));
  const open = cli([]);
  expect(open.problem.unknown_size_tensors).toBeGreaterThan(100);
  await page.goto('/');
  await ready(page);
  await packSecondPane(page);
  await page.getByTestId('file').setInputFiles(`${samples}/ppocr_mobile_v2_cls.stripped.onnx`);
  await expect(page.locator('section.summary')).toContainText('ppocr_mobile_v2_cls');
  await expect(page.getByTestId('dim-x axis 2')).toHaveValue('');
  await expect(page.getByTestId('unknown-size')).toHaveAttribute('data-count', String(open.problem.unknown_size_tensors));
  await expect(page.getByTestId('unknown-size')).toContainText('x axis 0, x axis 2, x axis 3');
  await expect(page.getByTestId('pane1-peak')).toHaveAttribute('data-bytes', String(open.plans[1].peak_bytes));
  // the sample opens at the classifier's documented 1 × 3 × 48 × 192 crop
  const crop = cli(['--dim', 'x axis 0=1', '--dim', 'x axis 2=48', '--dim', 'x axis 3=192']);
  expect(crop.problem.unknown_size_tensors).toBe(0);
  await page.getByTestId('sample').selectOption('ppocr_cls');
  await expect(page.getByTestId('dim-x axis 3')).toHaveValue('192');
  await expect(page.getByTestId('unknown-size')).toHaveCount(0);
  for (const i of [0, 1]) {
    await expect(page.getByTestId(`pane${i}-peak`)).toHaveAttribute('data-bytes', String(crop.plans[i].peak_bytes));
  }
  // clearing a field gives the dim back to unknown
  await page.getByTestId('dim-x axis 3').fill('');
  await page.getByTestId('dim-x axis 3').dispatchEvent('change');
  await expect(page.getByTestId('unknown-size')).toContainText('x axis 3');
});

test('a dim or gear notice clears once a valid value is typed in that field, not in another', async ({ page }) => {
  await page.goto('/');
  await ready(page);
  const notice = page.getByTestId('notice');
  const set = async (id, v) => {
    await page.getByTestId(id).fill(v);
    await page.getByTestId(id).dispatchEvent('change');
  };
  await set('dim-batch', '0');
  await expect(notice).toContainText("'batch' must be a whole number");
  // a valid gear list is another field: the dim's notice stays
  await set('gears', '');
  await expect(notice).toContainText("'batch' must be a whole number");
  await set('dim-batch', '2');
  await expect(notice).toHaveCount(0);
  await set('gears', '1,x');
  await expect(notice).toContainText("gear 'x' is not a batch size");
  await set('gears', '1,2');
  await expect(notice).toHaveCount(0);
  await expect(page.getByTestId('pane0-peak')).toBeVisible();
});

test('every pane says when a symbolic dim was assumed, until the user gives it', async ({ page }) => {
  await page.goto('/');
  await ready(page);
  // MobileNetV2's input has the symbolic dim `batch`, bound to 1 when not given
  for (const i of [0, 1]) {
    await expect(page.getByTestId(`pane${i}-defaulted`)).toContainText('Assumed batch = 1');
  }
  // an embed says it once, in its header
  const embed = await page.context().newPage();
  await embed.goto('/?embed=1');
  await ready(embed);
  await expect(embed.getByTestId('embed-defaulted')).toHaveText(' · assumed batch = 1');
  await expect(embed.getByTestId('pane0-defaulted')).toHaveCount(0);
  await embed.close();
  // the field shows no value it was not given: the assumed 1 is its placeholder (a new user
  // read the banner as contradicting a field that showed 1)
  await expect(page.getByTestId('dim-batch')).toHaveValue('');
  await expect(page.getByTestId('dim-batch')).toHaveAttribute('placeholder', '1');
  await page.getByTestId('dim-batch').fill('1');
  await page.getByTestId('dim-batch').dispatchEvent('change');
  await expect(page.getByTestId('pane0-defaulted')).toHaveCount(0);
  await expect(page.getByTestId('pane1-defaulted')).toHaveCount(0);
  // a link that gives the dim opens without the banner
  await page.waitForTimeout(400);
  await page.goto('about:blank');
  await page.goBack();
  await ready(page);
  await expect(page.getByTestId('pane0-peak')).toBeVisible();
  await expect(page.getByTestId('pane0-defaulted')).toHaveCount(0);
  await expect(page.getByTestId('dim-batch')).toHaveValue('1');
  // cleared, the dim is assumed again (not refused as "not a number")
  await page.getByTestId('dim-batch').fill('');
  await page.getByTestId('dim-batch').dispatchEvent('change');
  await expect(page.getByTestId('pane0-defaulted')).toContainText('Assumed batch = 1');
  await expect(page.getByTestId('dim-batch-error')).toHaveCount(0);
});

test('tensors of unknown size are counted next to each peak', async ({ page }) => {
  // cli/tests/bad_onnx.rs: relu0 -> a; foo0 (an unknown domain) -> b; relu1 -> y: b and y
  // are of unknown size, not planned (the CLI writes "+2 tensors of unknown size")
  await page.goto('/');
  await ready(page);
  await expect(page.getByTestId('pane0-unknown')).toHaveCount(0);
  await page.getByTestId('file').setInputFiles(new URL('../../cli/tests/bad/onnx/unknown-op.onnx', import.meta.url).pathname);
  await expect(page.locator('section.summary')).toContainText('unknown-op.onnx');
  for (const i of [0, 1]) {
    const u = page.getByTestId(`pane${i}-unknown`);
    await expect(u).toHaveAttribute('data-count', '2');
    await expect(u).toContainText('+2 tensors of unknown size');
  }
});

test('the Embed dialog is a modal with a Copy button; the budget reads in MiB; "Open file…" shows keyboard focus', async ({ page, context }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.goto('/');
  await ready(page);
  await page.getByTestId('embed').click();
  const dialog = page.getByTestId('embed-dialog');
  await expect(dialog).toHaveAttribute('aria-modal', 'true');
  // the modal takes the focus
  await expect(page.getByTestId('embed-copy')).toBeFocused();
  await page.getByTestId('embed-copy').click();
  await expect(page.getByTestId('embed-copied')).toHaveText(' Copied.');
  const snippet = await page.getByTestId('embed-snippet').inputValue();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(snippet);
  await page.keyboard.press('Escape');
  await expect(dialog).toHaveCount(0);
  // a budget typed in bytes is shown in the unit that states it exactly
  await page.getByTestId('budget').fill('157286400');
  await page.getByTestId('budget').dispatchEvent('change');
  await expect(page.getByTestId('budget')).toHaveValue('150 MiB');
  // the file input sits hidden in its label: focusing it outlines the label
  await page.getByTestId('file').focus();
  const outline = await page.locator('label.button.file').evaluate((e) => getComputedStyle(e).outlineStyle);
  expect(outline).toBe('solid');
});

test('a tensor whose size is unknown can be given one, as with `memplan plan --size`, and the link keeps it', async ({ page }) => {
  // unknown-op.onnx: op 'foo0' is of a domain memplan does not know, so b (its output) and y
  // (Relu of b) have no size; the CLI plans them once given
  const f = 'cli/tests/bad/onnx/unknown-op.onnx';
  const cli = (extra) => JSON.parse(memplan(['plan', f, '--strategy', 'ge-block', '--strategy', 'greedy-size-best-fit', '--format', 'json', ...extra]));
  const open = cli([]);
  expect(open.problem.unknown_size_tensors).toBe(2);
  const given = cli(['--size', 'b=4096', '--size', 'y=4096']);
  expect(given.problem.unknown_size_tensors).toBe(0);
  await page.goto('/');
  await ready(page);
  await packSecondPane(page);
  await page.getByTestId('file').setInputFiles(new URL('../../cli/tests/bad/onnx/unknown-op.onnx', import.meta.url).pathname);
  await expect(page.getByTestId('unknown-size')).toHaveAttribute('data-count', '2');
  await page.getByTestId('sizes').fill('b=4KiB, y=4096');
  await page.getByTestId('sizes').dispatchEvent('change');
  await expect(page.getByTestId('unknown-size')).toHaveCount(0);
  for (const i of [0, 1]) {
    await expect(page.getByTestId(`pane${i}-peak`)).toHaveAttribute('data-bytes', String(given.plans[i].peak_bytes));
  }
  await expect(page.getByTestId('sizes')).toHaveValue('b=4096, y=4096');
  // a small file's link carries its lowered problem, the given sizes in it
  const url = page.url();
  await page.goto('about:blank');
  await page.goto(url);
  await expect(page.getByTestId('pane1-peak')).toHaveAttribute('data-bytes', String(given.plans[1].peak_bytes));
  // a name the model does not have is refused, naming it
  await page.getByTestId('file').setInputFiles(new URL('../../cli/tests/bad/onnx/unknown-op.onnx', import.meta.url).pathname);
  await expect(page.getByTestId('unknown-size')).toHaveAttribute('data-count', '2');
  await page.getByTestId('sizes').fill('nosuch=1');
  await page.getByTestId('sizes').dispatchEvent('change');
  await expect(page.locator('body')).toContainText("the graph has no tensor 'nosuch'");
});
