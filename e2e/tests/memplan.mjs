// Runs the CLI built by global-setup.mjs from the repository root (or `cwd`, relative to it);
// returns stdout.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../../', import.meta.url));
const target = process.env.CARGO_TARGET_DIR ?? join(root, 'target');

export function memplan(args, { cwd = '.' } = {}) {
  return execFileSync(join(target, 'debug', 'memplan'), args, {
    cwd: join(root, cwd), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'],
  });
}
