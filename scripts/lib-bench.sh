# The environment every browser benchmark script starts from (sourced, not run): the shared
# build directory, the toolchain, the Chromium driver, and a test timeout long enough for a
# benchmark (an hour unless the caller sets one).
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/weblab-target}"
export PATH="$HOME/.cargo/bin:$PATH"
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"
export WASM_BINDGEN_TEST_TIMEOUT="${WASM_BINDGEN_TEST_TIMEOUT:-${BENCH_TIMEOUT:-3600}}"
