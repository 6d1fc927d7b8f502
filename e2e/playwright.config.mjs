// Browser tests of the built playground (dist/, built by scripts/test with trunk) in Debian's
// Chromium: Playwright's own browser download does not work on this network.
import { defineConfig } from '@playwright/test';

export default defineConfig({
  testDir: './tests',
  globalSetup: './global-setup.mjs',
  timeout: 60_000,
  expect: { timeout: 20_000 },
  workers: 1,
  reporter: [['list'], ['json', { outputFile: 'artifacts/results.json' }]],
  outputDir: 'test-results',
  use: {
    baseURL: 'http://127.0.0.1:8081',
    viewport: { width: 1360, height: 900 },
    launchOptions: {
      executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
      args: [
        '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
      ],
    },
  },
  webServer: {
    command: 'node serve.mjs 8081',
    url: 'http://127.0.0.1:8081/index.html',
    reuseExistingServer: false,
    timeout: 30_000,
  },
});
