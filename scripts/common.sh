# Shared set-up for scripts/serve and scripts/test. Idempotent: each step checks first and
# installs only what is missing, saying what and why. Tools go to ~/.cargo/bin (not the
# checkout) so fresh clones on the same machine reuse them.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"

TRUNK_VERSION="0.21.14"      # 0.22.x needs rustc >= 1.96 (see docs/toolchain notes)
BINARYEN_VERSION="132.0.0"   # Debian's binaryen 108 cannot parse our wasm

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# wasm-bindgen-cli must equal the wasm-bindgen in Cargo.lock exactly.
wasm_bindgen_version() {
  awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock
}

ensure_wasm_target() {
  if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    say "adding Rust target wasm32-unknown-unknown (the playground and the no_std core build for it)"
    rustup target add wasm32-unknown-unknown
  fi
}

# ensure_target TRIPLE WHY: adds a Rust target once.
ensure_target() {
  if ! rustup target list --installed 2>/dev/null | grep -qx "$1"; then
    say "adding Rust target $1 ($2)"
    rustup target add "$1"
  fi
}

ensure_trunk() {
  if ! trunk --version 2>/dev/null | grep -q " $TRUNK_VERSION\$"; then
    say "installing trunk $TRUNK_VERSION from crates.io (builds the playground; ~10 min on 2 cores, once)"
    CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
      CARGO_PROFILE_RELEASE_OPT_LEVEL=1 \
      cargo install --locked trunk --version "$TRUNK_VERSION"
  fi
}

ensure_wasm_bindgen() {
  local want
  want="$(wasm_bindgen_version)"
  if [ -z "$want" ]; then
    say "Cargo.lock has no wasm-bindgen; run 'cargo generate-lockfile'"; return 1
  fi
  if ! wasm-bindgen --version 2>/dev/null | grep -q " $want\$"; then
    say "installing wasm-bindgen-cli $want from crates.io (must match Cargo.lock; ~4 min, once)"
    # --locked fails here: its lockfile wants a crate version the registry lacks.
    CARGO_PROFILE_RELEASE_OPT_LEVEL=1 cargo install wasm-bindgen-cli --version "$want"
  fi
}

ensure_node_modules() {
  if [ ! -x e2e/node_modules/.bin/wasm-opt ] || [ e2e/package-lock.json -nt e2e/node_modules/.package-lock.json ]; then
    say "installing e2e node packages from e2e/package-lock.json (wasm-opt $BINARYEN_VERSION, Playwright)"
    (cd e2e && npm ci --no-audit --no-fund --loglevel=error)
  fi
  export PATH="$ROOT/e2e/node_modules/.bin:$PATH"
}

ensure_chromium() {
  if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    say "installing Debian chromium and chromium-driver (browser tests; ~1 min)"
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium chromium-driver >/dev/null
  fi
}

ensure_web_tools() {
  ensure_wasm_target
  ensure_node_modules
  ensure_trunk
  ensure_wasm_bindgen
}
