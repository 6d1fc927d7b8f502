// Builds the CLI once before the browser tests: they compare the page's numbers with
// `memplan`'s. Done here so that compiling never eats a test's time budget.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function globalSetup() {
  const root = fileURLToPath(new URL('../', import.meta.url));
  execFileSync('cargo', ['build', '-q', '-p', 'memplan-cli'], { cwd: root, stdio: 'inherit' });
}
