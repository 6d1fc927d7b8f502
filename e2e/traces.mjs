// Large tensor traces for the scale tests and the benchmark, generated (deterministic, no
// files to ship): `trace(n)` is a CSV (`id,lower,upper,size`, the MiniMalloc format the
// playground reads) of `n` buffers shaped like a training step's trace: most tensors live a
// few steps, one in fifty lives for a long stretch (weights, saved activations), sizes spread
// log-uniformly from 64 B to 16 MiB.
export function trace(n, seed = 1) {
  let x = seed >>> 0 || 1;
  const rand = () => {
    // xorshift32
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    return x / 4294967296;
  };
  const steps = Math.max(2, Math.floor(n / 2));
  const rows = ['id,lower,upper,size'];
  for (let i = 0; i < n; i++) {
    const start = Math.min(steps - 1, Math.floor(i / 2 + rand() * 4));
    const long = rand() < 0.02;
    const len = long ? Math.floor(rand() * steps / 4) : Math.floor(-Math.log(1 - rand()) * 4);
    const end = Math.min(steps, start + 1 + len); // half-open: past the last step
    const size = Math.max(64, Math.floor(Math.exp(Math.log(64) + rand() * (Math.log(16 << 20) - Math.log(64)))));
    rows.push(`t${i},${start},${end},${size}`);
  }
  return rows.join('\n') + '\n';
}

// The three large traces the benchmark reports (buffer counts of the traces in issue 15).
export const LARGE = [18_000, 28_000, 62_185];
