#!/usr/bin/env bash
# Second H200 call: extend each workload's sweep past the largest batch size of sweep_h200.sh by
# doubling until the first out-of-memory (--stop-at-oom), to find the largest power of two that
# fits. OBSERVE mode (current limit, nothing written to the GPU). Short windows (at least 2
# warm-up iterations and 1 s, then at least 3 iterations and 3 s) because large batches are slow
# per step; the settings are in each shard's provenance. Writes $OUT/ext-<workload>.parquet and logs.
set -uo pipefail
OUT=${OUT:-/tmp/zb-out}
mkdir -p "$OUT"
export ZEUS_BENCH_STATE_DIR=/tmp/zb-state NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 \
  NVSHMEM_DISABLE_NVLS=1 CUDA_DEVICE_ORDER=PCI_BUS_ID PYTHONUNBUFFERED=1 TQDM_DISABLE=1
T0=$(date +%s)
python3 -m pip install -q --no-deps --no-build-isolation -e . >/tmp/zb-install.log 2>&1 || { cat /tmp/zb-install.log; exit 1; }
declare -A BS=(
  [imagenet]=4096,8192
  [squad]=256,512,1024
  [librispeech]=1024,2048
  [cifar100]=32768,65536,131072
  [sentiment140]=1024,2048,4096
  [movielens-1m]=131072,262144,524288,1048576,2097152
)
queue() {
  local gpu=$1; shift
  for w in "$@"; do
    if (( $(date +%s) - T0 > 150 )); then echo "deadline: $w not measured"; continue; fi
    echo "== $w on GPU $gpu ($(date -u +%H:%M:%S))"
    timeout 90 zeus-bench sweep --backend nvml --workload "$w" --gpus "$gpu" --observe --gpu-kind h200 \
      --batch-sizes "${BS[$w]}" --stop-at-oom --warmup-iters 2 --warmup-s 1 --measure-iters 3 --measure-s 3 \
      --out "$OUT/ext-$w.parquet"
    echo "== $w exit $? ($(date -u +%H:%M:%S))"
  done
}
queue 0 imagenet squad librispeech >"$OUT/ext-gpu0.log" 2>&1 &
queue 1 cifar100 sentiment140 movielens-1m >"$OUT/ext-gpu1.log" 2>&1 &
wait
grep -h -E "^==|error|skipped|does not fit|WARNING" "$OUT"/ext-gpu*.log
echo "elapsed $(( $(date +%s) - T0 )) s"
