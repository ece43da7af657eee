#!/usr/bin/env bash
# Cross-CPU and thread-count bit-identity check, exhaustive accuracy and the
# benchmarks, on a machine with more cores (and possibly AVX-512) than the
# development machine. Needs .dev/ from tools/device_bundle.sh and python3
# with numpy, safetensors, pillow and pytest (torch optional). Logs go to
# $OUT (default /tmp/out). Every step is time-boxed so that partial results
# still come back.
#
#   bash tools/device_check.sh [ACCURACY_FUNCTIONS...]
#
# Order: the bit-identity tests first, on all cores; then the exhaustive
# accuracy run (if functions are named) in the background on cores 4.. and
# the benchmarks pinned to cores 0-3 at 1 and 2 threads, so the two do not
# share cores.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
step() { echo; echo "=== $* ($(date +%T))"; }
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site .dev/*.whl 2>/dev/null || exit 1
export PYTHONPATH=/tmp/site
cores=$(nproc)
{
step cpu
grep -m1 'model name' /proc/cpuinfo; echo "$cores logical CPUs"
grep -m1 -o 'avx512[a-z_0-9]*' /proc/cpuinfo | sort -u | tr '\n' ' '; echo
python3 -c "import onemodel as om; print('paths', om.compute.available_kernel_paths())"
step rust unit tests, every available path
timeout 120 .dev/rust-tests --test-threads 8 2>&1 | tail -3
step "pytest, threads 1,3,8,$cores"
ONEMODEL_TEST_THREADS=1,3,8,$cores timeout 180 python3 -m pytest -q -x -p no:cacheprovider tests 2>&1 | tail -3
} 2>&1 | tee "$OUT/check.log"
acc_pid=
if [ $# -gt 0 ] && [ "$cores" -gt 6 ]; then
  (timeout 400 taskset -c 4-$((cores - 1)) .dev/accuracy "$@" --threads $((cores - 4)) > "$OUT/accuracy.log" 2>&1) &
  acc_pid=$!
fi
pin="taskset -c 0-3"
{
step gemm
timeout 150 $pin python3 benchmarks/bench_gemm.py --paths avx512 avx2 --threads 1 2 --repeats 3 --max-time 2 2>&1
step conv
timeout 60 $pin python3 benchmarks/bench_conv.py --repeat 5 --threads 1 2 2>&1
step crnn
timeout 60 $pin python3 benchmarks/bench_crnn.py --repeats 5 --threads 1 2 2>&1
step recognizer
timeout 60 $pin python3 benchmarks/bench_recognizer.py --steps 5 --threads 1 2 2>&1
step rnn
timeout 60 $pin python3 benchmarks/bench_rnn.py --repeats 3 2>&1
step optim
timeout 30 $pin python3 benchmarks/bench_optim.py --repeat 100 2>&1
step elementwise
timeout 40 $pin python3 benchmarks/bench_elementwise.py --repeats 7 2>&1
step done
} 2>&1 | tee "$OUT/bench.log"
if [ -n "$acc_pid" ]; then
  step "waiting for the accuracy run"; wait "$acc_pid"; cat "$OUT/accuracy.log"
fi
