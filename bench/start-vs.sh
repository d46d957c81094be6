#!/bin/bash
# Cold `npm start` backfills of two trees on one synthetic chain, alternated: the table of issue 30.
#
#   bench/start-vs.sh <other tree> [runs] [events]     (from this tree's root; defaults: 3 runs, 1,000,000 events)
#
# The chain (`synthetic --events <events> --seed 1`, kept in .data/bench/start-vs) is served by this
# tree's replay node; each run gets a fresh database on the machine's Postgres (127.0.0.1:5432,
# database start_vs) and is timed from launch until /api/health reports the finalized block. Each
# tree is started with its own package.json `start` script: every step before the last `&&` (the
# build) runs untimed first, the last step is the one timed. Per run it prints the wall time, the
# CPU of the tree's processes (the API process and the indexer child, read from /proc before they
# are stopped), the CPU of Postgres (every postgres process, exited backends included through the
# postmaster's children's time), the CPU of the replay node during the run and the load average
# before the run; then, per process of the tree, the CPU of its threads (main first, then the
# others by CPU: in the indexer, the backfill thread and V8's helper threads), which says where a
# difference between the trees is.
# The other tree needs its node_modules (a symlink to this tree's works when its lock file no
# longer installs). Ports 47101-47103 and 47145. The machine is shared: state the load.
set -u
OTHER=$(cd "${1:?usage: bench/start-vs.sh <other tree> [runs] [events]}" && pwd); RUNS=${2:-3}; EV=${3:-1000000}
HERE=$PWD; WORK=$HERE/.data/bench/start-vs; mkdir -p "$WORK"
chain=$WORK/c$EV.ndjson.gz; dep=${chain%.ndjson.gz}.deployment.json
[[ -s $dep ]] || node --import tsx src/main.ts synthetic --out "$chain" --events "$EV" --seed 1 >"$WORK/gen.log" 2>&1 || { echo "synthetic failed: $WORK/gen.log"; exit 1; }
rpc=http://127.0.0.1:47145
call() { curl -s -m 5 -H 'content-type: application/json' -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$1\",\"params\":$2}" $rpc; }
launch() { local pidfile=$1 log=$2; shift 2; setsid bash -c 'echo $$ > "$0"; exec "$@"' "$pidfile" "$@" >"$log" 2>&1 </dev/null & for _ in $(seq 50); do [[ -s $pidfile ]] && break; sleep 0.1; done; }
rm -f "$WORK/replay.pid" "$WORK/run.pid"
launch "$WORK/replay.pid" "$WORK/replay.log" node --import tsx src/main.ts replay --recording "$chain" --port 47145
trap 'kill -- -$(cat "$WORK/replay.pid") 2>/dev/null; [[ -s $WORK/run.pid ]] && kill -KILL -- -$(cat "$WORK/run.pid") 2>/dev/null' EXIT
for _ in $(seq 120); do call eth_chainId '[]' | grep -q result && break; sleep 1; done
fin=$(call eth_getBlockByNumber '["finalized",false]' | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(Number(JSON.parse(s).result.number)))')
replaySid=$(cat "$WORK/replay.pid")
ticks=$(getconf CLK_TCK)
# CPU ticks of processes: utime + stime (+ children's, for the postmaster's exited backends).
cpuOf() { local t=0 p; for p in "$@"; do local a; read -r -a a <"/proc/$p/stat" 2>/dev/null || continue; t=$((t + a[13] + a[14] + a[15] + a[16])); done; echo $t; }
postgresCpu() { cpuOf $(pgrep -x postgres); }
treePids() { local p; for p in $(pgrep -f "main\.(mjs|ts) start|indexer-child\.(mjs|ts)"); do [[ $(ps -o sid= -p "$p" | tr -d ' ') == "$replaySid" ]] || echo "$p"; done; }
treeCpu() { cpuOf $(treePids); }
# Per process: "pid <args>: main X s, threads Y Z ... s" (utime + stime of each thread, in seconds).
threadCpu() {
  local p t a main others
  for p in $(treePids); do
    main=""; others=()
    for t in /proc/"$p"/task/*; do
      read -r -a a <"$t/stat" 2>/dev/null || continue
      if [[ ${t##*/} == "$p" ]]; then main=$((a[13] + a[14])); else others+=($((a[13] + a[14]))); fi
    done
    printf '    %s: main %s s, other threads %s s\n' "$(tr '\0' ' ' <"/proc/$p/cmdline" | cut -c1-60)" "$(echo "scale=1; $main / $ticks" | bc)" \
      "$(for x in "${others[@]}"; do echo "$x"; done | sort -rn | awk -v k="$ticks" '$1 > 0 { printf "%s%.1f", (n++ ? " " : ""), $1 / k }')"
  done
}
timed() {
  local tree=$1 start steps last
  start=$(node -e 'console.log(require(process.argv[1]).scripts.start)' "$tree/package.json")
  steps=${start%&&*}; last=${start##*&&}; [[ $steps == "$start" ]] && steps=""
  [[ -n $steps ]] && (cd "$tree" && bash -c "$steps" >/dev/null 2>&1)
  psql -q postgres://postgres@127.0.0.1:5432/postgres -c "DROP DATABASE IF EXISTS start_vs WITH (FORCE)" -c "CREATE DATABASE start_vs" >/dev/null 2>&1
  rm -rf "$WORK/data"
  local load pg0 rp0 t0 run b t1 cpu pg1 rp1 threads
  load=$(cut -d' ' -f1-3 /proc/loadavg); pg0=$(postgresCpu); rp0=$(cpuOf "$replaySid")
  (cd "$tree" && launch "$WORK/run.pid" "$WORK/run.log" env DATABASE_URL=postgres://postgres@127.0.0.1:5432/start_vs RPC_URL=$rpc DEPLOYMENT=$dep \
    INDEXER_PORT=47101 BACKEND_PORT=47102 PG_PORT=47103 DATA_DIR="$WORK/data" bash -c "exec $last")
  run=$(cat "$WORK/run.pid"); t0=$(date +%s.%N)
  for _ in $(seq 12000); do
    b=$(curl -s -m 1 127.0.0.1:47101/api/health | sed -nE 's/.*"latestIndexedBlock":([0-9]+).*/\1/p'); [[ -n $b && $b -ge $fin ]] && break
    kill -0 "$run" 2>/dev/null || { echo "$tree exited early: $WORK/run.log" >&2; return 1; }
    sleep 0.1
  done
  t1=$(date +%s.%N); cpu=$(treeCpu); pg1=$(postgresCpu); rp1=$(cpuOf "$replaySid"); threads=$(threadCpu)
  kill -TERM -- -"$run" 2>/dev/null; pkill -TERM -f "main\.(mjs|ts) start --only indexer|indexer-child\.(mjs|ts)"; sleep 3; kill -KILL -- -"$run" 2>/dev/null; rm -f "$WORK/run.pid"
  printf '%-40s %6.1f s wall, CPU %6.1f s (its processes), Postgres %5.1f s, replay node %4.1f s; load before %s\n' "$tree" \
    "$(echo "$t1 - $t0" | bc)" "$(echo "scale=1; $cpu / $ticks" | bc)" "$(echo "scale=1; ($pg1 - $pg0) / $ticks" | bc)" \
    "$(echo "scale=1; ($rp1 - $rp0) / $ticks" | bc)" "$load"
  echo "$threads"
}
echo "$EV-log chain, finalized block $fin; $RUNS runs each, alternated"
for _ in $(seq "$RUNS"); do timed "$OTHER" || exit 1; timed "$HERE" || exit 1; done
psql -q postgres://postgres@127.0.0.1:5432/postgres -c "DROP DATABASE IF EXISTS start_vs WITH (FORCE)" >/dev/null 2>&1
