// Runs the CLI built by global-setup.mjs from the repository root (or `cwd`, relative to it);
// returns stdout. An exit status other than 0 throws, unless listed in `statuses` (e.g. 3:
// `simulate` with failed allocations, `plan` over `--capacity`).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../../', import.meta.url));
const target = process.env.CARGO_TARGET_DIR ?? join(root, 'target');

export function memplan(args, { cwd = '.', statuses = [0] } = {}) {
  try {
    return execFileSync(join(target, 'debug', 'memplan'), args, {
      cwd: join(root, cwd), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch (e) {
    if (statuses.includes(e.status)) return e.stdout;
    throw e;
  }
}
