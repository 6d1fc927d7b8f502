// Playground benchmark: time from navigation to the first plan drawn (the performance mark
// `memplan:first-plan`, set when the panes show a plan) for the default sample and for
// ViT-B/16, median of 5 cold page loads each; the wasm size raw and gzipped; and the exact
// solver (`optimal`, 2 s limit) in the page's planning worker against the native release CLI
// on the same MiniMalloc files, median of 3 each (the search is deterministic: equal node
// counts mean equal work). Needs a built dist/ (scripts/serve or trunk build --release) and
// ../shared/benchmarks (MEMPLAN_BENCHMARKS to change). Usage: npm run bench
// (`node bench.mjs scale`: only the large traces: first plan, long tasks, interaction latency;
// `node bench.mjs scale 62185`: only that one).
import { chromium } from '@playwright/test';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { trace, LARGE } from './traces.mjs';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const port = 8082;
const server = spawn('node', ['serve.mjs', String(port)], { cwd: fileURLToPath(new URL('.', import.meta.url)) });
await new Promise((r) => server.stdout.once('data', r));

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

async function firstPlan(query) {
  const ctx = await browser.newContext(); // cold: no cache
  const page = await ctx.newPage();
  await page.goto(`http://127.0.0.1:${port}/${query}`);
  await page.waitForSelector('html[data-ready]', { timeout: 60_000 });
  const ms = await page.evaluate(() => performance.getEntriesByName('memplan:first-plan')[0].startTime);
  await ctx.close();
  return ms;
}

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const pct = (v, p) => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor(v.length * p))];

// Large traces (generated, see traces.mjs): time from opening the file to both panes planned,
// long tasks (PerformanceObserver 'longtask') after that, and interaction latency: pointer
// moves and clicks over the timeline, each timed from the event to the next frame.
async function scale(n) {
  const ctx = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  const page = await ctx.newPage();
  await page.addInitScript(() => {
    window.__longtasks = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__longtasks.push([e.startTime, e.duration]); })
      .observe({ type: 'longtask', buffered: true });
  });
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.waitForSelector('html[data-ready]', { timeout: 60_000 });
  const t0 = await page.evaluate(() => performance.now());
  await page.getByTestId('file').setInputFiles({ name: `trace-${n}.csv`, mimeType: 'text/csv', buffer: Buffer.from(trace(n)) });
  await page.locator('section.summary', { hasText: `trace-${n}.csv` }).waitFor({ timeout: 120_000 });
  await page.getByTestId('pane0-peak').waitFor({ timeout: 120_000 });
  await page.getByTestId('pane1-peak').waitFor({ timeout: 120_000 });
  const planned = await page.evaluate(() => performance.now());
  await page.getByTestId('timeline').scrollIntoViewIfNeeded();
  const lat = await page.evaluate(async () => {
    const el = document.getElementById('timeline-canvas');
    const r = el.getBoundingClientRect();
    const frame = () => new Promise((res) => requestAnimationFrame(() => setTimeout(res, 0)));
    const out = { move: [], click: [] };
    for (let k = 0; k < 40; k++) {
      const x = r.left + r.width * (0.1 + 0.8 * ((k * 37) % 40) / 40);
      const y = r.top + r.height * (0.15 + 0.7 * ((k * 13) % 40) / 40);
      const kind = k % 4 === 3 ? 'click' : 'move';
      const t = performance.now();
      el.dispatchEvent(new MouseEvent(kind === 'move' ? 'mousemove' : 'click', { clientX: x, clientY: y, bubbles: true }));
      await frame();
      out[kind].push(performance.now() - t);
    }
    return out;
  });
  const tasks = await page.evaluate(() => window.__longtasks);
  const after = tasks.filter(([s]) => s > planned);
  await ctx.close();
  return {
    first: planned - t0,
    move: lat.move, click: lat.click,
    long: after.length, longMax: Math.max(0, ...after.map(([, d]) => d)),
  };
}
const scaleRows = [];
// `node bench.mjs scale 62185`: only that trace
const only = process.argv[2] === 'scale' && process.argv[3] ? [Number(process.argv[3])] : LARGE;
for (const n of only) {
  const r = await scale(n);
  scaleRows.push(`| ${n} buffers | ${r.first.toFixed(0)} ms | ${median(r.move).toFixed(0)} / ${pct(r.move, 0.95).toFixed(0)} ms | ${median(r.click).toFixed(0)} / ${Math.max(...r.click).toFixed(0)} ms | ${r.long} (longest ${r.longMax.toFixed(0)} ms) |`);
}
console.log('| large trace (generated) | open file → both panes planned | hover: median / p95 | click: median / max | long tasks after the plan |\n|---|---:|---:|---:|---:|');
console.log(scaleRows.join('\n'));
console.log('');
if (process.argv[2] === 'scale') {
  await browser.close();
  server.kill();
  process.exit(0);
}

const rows = [];
for (const [name, query, target] of [
  ['default sample (MobileNetV2, ONNX)', '', 1000],
  ['ViT-B/16 (ONNX, 623 ops)', '?sample=vit_b_16', 2000],
]) {
  const runs = [];
  for (let i = 0; i < 5; i++) runs.push(await firstPlan(query));
  rows.push(`| ${name} | ${median(runs).toFixed(0)} ms | ${Math.min(...runs).toFixed(0)}–${Math.max(...runs).toFixed(0)} ms | ≤ ${target} ms |`);
}

// The exact solver, wasm in the page's worker versus native.
const root = fileURLToPath(new URL('../', import.meta.url));
const benchDir = process.env.MEMPLAN_BENCHMARKS ?? fileURLToPath(new URL('../../shared/benchmarks/', import.meta.url));
const files = ['A', 'G', 'H', 'I', 'K'].map((f) => `${benchDir}/minimalloc/challenging/${f}.1048576.csv`)
  .concat([`${benchDir}/real/mindspore_somas_resnet50.csv`])
  .filter((f) => existsSync(f));
const solverRows = [];
if (files.length > 0) {
  execFileSync('cargo', ['build', '-q', '--release', '-p', 'memplan-cli'], { cwd: root, stdio: 'inherit' });
}
const nodesOf = (notes) => (notes.match(/(\d+) search nodes/) ?? [])[1] ?? '?';
for (const file of files) {
  const native = [];
  let nativeNodes = '?';
  for (let i = 0; i < 3; i++) {
    const out = JSON.parse(execFileSync(`${root}/target/release/memplan`,
      ['plan', file, '-s', 'optimal', '--time-limit', '2000', '--format', 'json'], { encoding: 'utf8' }));
    native.push(out.plans[0].plan_time_us / 1000);
    nativeNodes = nodesOf(out.plans[0].notes.join(' '));
  }
  const wasm = [];
  let wasmNodes = '?';
  for (let i = 0; i < 3; i++) {
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.waitForSelector('html[data-ready]', { timeout: 60_000 });
    await page.getByTestId('file').setInputFiles(file);
    await page.getByTestId('pane1-strategy').selectOption('optimal');
    const notes = page.getByTestId('pane1-notes');
    await notes.filter({ hasText: 'search nodes' }).waitFor({ timeout: 60_000 });
    wasm.push(Number(await page.getByTestId('pane1-time').getAttribute('data-ms')));
    wasmNodes = nodesOf(await notes.innerText());
    await ctx.close();
  }
  const name = file.split('/').pop();
  const same = nativeNodes === wasmNodes ? nativeNodes : `${nativeNodes} vs ${wasmNodes}`;
  solverRows.push(`| ${name} | ${same} | ${median(native).toFixed(0)} ms | ${median(wasm).toFixed(0)} ms | ${(median(wasm) / median(native)).toFixed(2)} |`);
}
await browser.close();
server.kill();

console.log('| page | first plan (median of 5) | range | target |\n|---|---|---|---|');
console.log(rows.join('\n'));
console.log('');
if (solverRows.length > 0) {
  console.log('| `optimal`, 2 s limit | search nodes | native (CLI, release) | wasm (page worker) | wasm / native |\n|---|---:|---:|---:|---:|');
  console.log(solverRows.join('\n'));
  console.log('');
}
let total = 0;
let totalGz = 0;
for (const wasm of readdirSync(dist).filter((f) => f.endsWith('.wasm'))) {
  const bytes = readFileSync(dist + wasm);
  const gz = gzipSync(bytes, { level: 9 }).length;
  total += bytes.length;
  totalGz += gz;
  console.log(`wasm: ${wasm}: ${(bytes.length / 1024).toFixed(0)} KiB raw, ${(gz / 1024).toFixed(0)} KiB gzipped`);
}
console.log(`wasm in all (page + planning worker): ${(total / 1024).toFixed(0)} KiB raw, ${(totalGz / 1024).toFixed(0)} KiB gzipped (target ≤ 1536 KiB gzipped)`);
