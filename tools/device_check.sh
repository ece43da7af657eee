#!/usr/bin/env bash
# Cross-CPU and thread-count bit-identity check, plus benchmarks, on a machine
# with more cores (and possibly AVX-512) than the development machine.
# Needs .dev/ from tools/device_bundle.sh and python3 with numpy, safetensors,
# pillow and pytest (torch optional). Writes logs to $OUT (default /tmp/out).
# Every step is time-boxed so that partial results still come back.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
step() { echo; echo "=== $* ($(date +%T))"; }
{
step cpu
grep -m1 'model name' /proc/cpuinfo; nproc
grep -m1 -o 'avx512[a-z_0-9]*' /proc/cpuinfo | sort -u | tr '\n' ' '; echo
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .dev/*.whl || exit 1
export PYTHONPATH=/tmp/site
python3 -c "import onemodel as om; print('paths', om.compute.available_kernel_paths())"
step rust unit tests, every available path
timeout 120 .dev/rust-tests --test-threads 8 2>&1 | tail -4
step accuracy, sampled, every path must agree
timeout 90 .dev/accuracy --sample 268435456 --threads "$(nproc)" 2>&1 | grep -v '^[a-z_]*: [0-9.]* s$'
} 2>&1 | tee "$OUT/check.log"
{
step pytest, threads 1,3,8,16
ONEMODEL_TEST_THREADS=1,3,8,16 timeout 180 python3 -m pytest -q -x -p no:cacheprovider tests 2>&1 | tail -15
} 2>&1 | tee "$OUT/pytest.log"
{
step gemm
timeout 110 python3 benchmarks/bench_gemm.py --quick --repeats 3 --threads 1 2 16 --max-time 1 2>&1
step conv
timeout 60 python3 benchmarks/bench_conv.py --repeat 3 --threads 1 16 2>&1
step crnn
timeout 60 python3 benchmarks/bench_crnn.py --repeats 3 --threads 1 16 2>&1
step recognizer
timeout 60 python3 benchmarks/bench_recognizer.py --steps 5 --threads 1 16 2>&1
step done
} 2>&1 | tee "$OUT/bench.log"
