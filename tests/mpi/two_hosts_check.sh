#!/usr/bin/env bash
# Two "hosts" on one machine: network namespaces joined by a veth pair, so a
# run over processes crosses a real network stack (OpenMPI's TCP transport,
# its daemon on the second host started through `ip netns exec` instead of
# ssh). Checks that
#   1. pp 2 x dp 2 on 2 + 2 ranks trains as one process, bit for bit, with
#      every device in the trace and the traffic through the veth;
#   2. asynchronous data parallelism (dp 4) does too;
#   3. cutting the second host's link mid-run stops the job naming a silent
#      rank, rank 0 writing its summary.
# Needs root (namespaces), `ip` (iproute2), mpirun and python3; otherwise it
# says what is missing and exits 0 ("skipped"), so it never fails a machine
# that cannot run it. Not part of ctest: it changes the machine's network
# namespaces while it runs (and removes them on exit).
#
#   bash tests/mpi/two_hosts_check.sh [path/to/pipelab-cli]   (default build/app/pipelab-cli)
set -u

root="$(cd "$(dirname "$0")/../.." && pwd)"
cli="$(realpath "${1:-$root/build/app/pipelab-cli}" 2>/dev/null)"
examples="$root/examples"

skip() {
  echo "skipped: $1"
  exit 0
}
[ "$(id -u)" = 0 ] || skip "not root: network namespaces need root (or CAP_SYS_ADMIN)"
command -v ip > /dev/null || skip "no 'ip' command (Debian: iproute2)"
command -v mpirun > /dev/null || skip "no mpirun (Debian: openmpi-bin)"
command -v python3 > /dev/null || skip "no python3 (reads the summaries)"
[ -x "$cli" ] || skip "no pipelab-cli at '${1:-build/app/pipelab-cli}' (build it, or pass its path)"

host_a=pipelab_a_$$
host_b=pipelab_b_$$
address_a=10.77.0.1
address_b=10.77.0.2
work="$(mktemp -d)"
job=

# shellcheck disable=SC2317  # run by the trap
cleanup() {
  [ -n "$job" ] && kill "$job" 2> /dev/null
  ip netns del "$host_a" 2> /dev/null
  ip netns del "$host_b" 2> /dev/null  # takes the veth pair with it
  rm -rf "$work"
}
trap cleanup EXIT

ip netns add "$host_a" 2> "$work/netns.err" ||
  skip "cannot create a network namespace: $(head -1 "$work/netns.err")"
ip netns add "$host_b" || exit 1
ip link add "veth_a_$$" type veth peer name "veth_b_$$" || exit 1
ip link set "veth_a_$$" netns "$host_a" && ip link set "veth_b_$$" netns "$host_b" || exit 1
ip -n "$host_a" addr add "$address_a/24" dev "veth_a_$$" &&
  ip -n "$host_b" addr add "$address_b/24" dev "veth_b_$$" || exit 1
for host in "$host_a" "$host_b"; do ip -n "$host" link set lo up || exit 1; done
ip -n "$host_a" link set "veth_a_$$" up && ip -n "$host_b" link set "veth_b_$$" up || exit 1

# mpirun's "ssh": `agent HOST COMMAND...` runs the command in HOST's namespace.
cat > "$work/agent.sh" << EOF
#!/bin/sh
host=\$1; shift
case "\$host" in
  $address_a) exec ip netns exec $host_a sh -c "\$*" ;;
  $address_b) exec ip netns exec $host_b sh -c "\$*" ;;
esac
echo "agent: unknown host \$host" >&2; exit 1
EOF
chmod +x "$work/agent.sh"

# Two ranks on each host, every message over TCP on the veth's network; at
# most two minutes.
mpirun_two_hosts() {
  timeout 120 ip netns exec "$host_a" mpirun --allow-run-as-root --oversubscribe -np 4 \
    --host "$address_a:2,$address_b:2" --mca plm_rsh_agent "$work/agent.sh" \
    --mca btl tcp,self --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 \
    "$cli" train "$@"
}
received_on_b() { ip netns exec "$host_b" cat "/sys/class/net/veth_b_$$/statistics/rx_bytes"; }

failures=0
pass() { echo "ok: $1"; }
fail() {
  echo "FAILED: $1"
  failures=$((failures + 1))
}

# Reads the run's files: `same` (losses and validation loss of one.json and
# many.json equal), `devices` (devices in trace.json), `times` (a line of
# step times and clock offsets), `failed` (cut.json's status is failed).
cat > "$work/read.py" << 'EOF'
import json, os, sys
work, what = sys.argv[1:3]
def read(name):
    return json.load(open(os.path.join(work, name)))
if what == "same":
    one, many = read("one.json"), read("many.json")
    sys.exit(0 if one["loss"] == many["loss"] and one["val_loss"] == many["val_loss"] else 1)
if what == "devices":
    print(len({e["pid"] for e in read("trace.json")["traceEvents"] if e.get("ph") == "X"}))
if what == "times":
    one, many = read("one.json"), read("many.json")
    offsets = ", ".join(f"rank {c['rank']} {c['offset_to_rank0_s'] * 1e6:+.1f} +- {c['uncertainty_s'] * 1e6:.1f} us"
                        for c in many["processes"]["clock_offsets"][1:])
    print(f"median step {many['step_time_ms_median']:.2f} ms across the hosts, "
          f"{one['step_time_ms_median']:.2f} ms in one process; clock offsets {offsets}")
if what == "failed":
    sys.exit(0 if read("cut.json")["status"] == "failed" else 1)
EOF
read_runs() { python3 "$work/read.py" "$work" "$@"; }

# Trains `$@` in one process and across the two hosts, and compares.
train_both() {
  local name="$1"
  shift
  if ! "$cli" train "$@" --quiet --summary "$work/one.json" > /dev/null 2> "$work/one.err"; then
    fail "$name in one process: $(tail -1 "$work/one.err")"
    return
  fi
  local before
  before=$(received_on_b)
  if ! mpirun_two_hosts "$@" --quiet --summary "$work/many.json" \
    --trace "$work/trace.json" > /dev/null 2> "$work/many.err"; then
    fail "$name across the hosts: $(grep -v '^$' "$work/many.err" | tail -3)"
    return
  fi
  local crossed=$(($(received_on_b) - before))
  if read_runs same; then
    pass "$name: the same losses and validation loss, bit for bit"
  else
    fail "$name: the losses differ from one process's"
  fi
  if [ "$(read_runs devices)" = 4 ]; then
    pass "$name: every device in the trace"
  else
    fail "$name: not every device in the trace"
  fi
  if [ "$crossed" -gt 0 ]; then
    pass "$name: $crossed bytes reached the second host over the veth"
  else
    fail "$name: nothing crossed the veth"
  fi
  echo "   $(read_runs times)"
}

echo "two hosts: $host_a ($address_a) and $host_b ($address_b), two ranks each"
train_both "pp 2 x dp 2" --config "$examples/dp_tp_pp_mix.json" --set parallel.tp=1 --steps 20
train_both "async dp 4" --config "$examples/async_parameter_server.json" --steps 20

# The cut: once rank 0 reports steps, the second host's link goes down.
mpirun_two_hosts --config "$examples/async_parameter_server.json" --steps 1000000 --rank-timeout 2 \
  --summary "$work/cut.json" > /dev/null 2> "$work/cut.err" &
job=$!
for _ in $(seq 600); do grep -q "step 2/" "$work/cut.err" 2> /dev/null && break; sleep 0.1; done
ip -n "$host_b" link set "veth_b_$$" down
cut=$(date +%s.%N)
for _ in $(seq 200); do [ -s "$work/cut.json" ] && break; sleep 0.1; done
ended=$(date +%s.%N)
if read_runs failed 2> /dev/null && grep -q "has not answered" "$work/cut.err"; then
  pass "the cut stopped the job in $(python3 -c "print(f'{$ended - $cut:.1f}')") s: $(grep -m1 -o 'rank [0-9]* has not answered for [0-9.]* s' "$work/cut.err")"
else
  fail "the cut did not stop the job within 20 s: $(tail -3 "$work/cut.err")"
fi
# OpenMPI's mpirun waits for its daemon on the cut host: the link comes back
# so that it can end the job.
ip -n "$host_b" link set "veth_b_$$" up
timeout 60 tail --pid="$job" -f /dev/null || echo "note: mpirun still waits for the second host"
job=

[ "$failures" = 0 ] && echo "two hosts: every check passed" || echo "two hosts: $failures check(s) failed"
exit $((failures > 0))
