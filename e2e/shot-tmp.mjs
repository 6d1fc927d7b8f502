import { chromium } from '@playwright/test';
const url = process.argv[2], out = process.argv[3];
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless','--no-sandbox','--disable-gpu'] });
const p = await b.newPage({ viewport: { width: 1360, height: 1000 } });
p.on('console', m => console.log('console:', m.type(), m.text()));
p.on('pageerror', e => console.log('pageerror:', e.message));
await p.goto(url);
try { await p.waitForSelector('html[data-ready]', { timeout: 20000 }); } catch (e) { console.log('not ready'); }
await p.waitForTimeout(500);
await p.screenshot({ path: out, fullPage: true });
console.log('url now', p.url());
await b.close();
