#!/usr/bin/env bash
# Builds, here, what tools/device_check.sh runs on a machine that has no Rust
# toolchain: the release wheel, the Rust unit-test binary and the accuracy
# example, all for the x86-64 baseline with run-time ISA detection (the same
# code CI tests). Output: .dev/ (ignored by git; carry it to the machine).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .dev && mkdir -p .dev
maturin build --release --quiet -o .dev
exe=$(cargo test --release --no-run 2>&1 | sed -n 's/.*Executable unittests rust\/src\/lib.rs (\(.*\))/\1/p')
cp "$exe" .dev/rust-tests
cargo build --release --quiet --example accuracy
cp target/release/examples/accuracy .dev/accuracy
ls -la .dev
