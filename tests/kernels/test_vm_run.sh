#!/bin/bash
# Tests of the kernel matrix's own machinery, each a real VM: scripts/vm-run.sh passes the
# command's exit code out and a file through a share, stops a hung VM at its timeout with the
# console shown, and reports a kernel that dies under the command; tests/kernels/matrix.py turns
# red when the smoke suite fails inside a VM (there only: its agent replaced by /bin/false).
# Usage: test_vm_run.sh [KERNEL]   (a name of tests/kernels/amd64.list, default 6.1)
set -uo pipefail
cd "$(dirname "$0")/../.."
k=${1:-6.1}
kdir=build/kernels/amd64/$k
out=build/kernels/run/test-vm-run
rm -rf "$out" && mkdir -p "$out"
scripts/fetch-kernels.sh amd64 "$k" || exit 1
failed=0
check() { # NAME WANT_RC GOT_RC [FILE PATTERN]: the exit code, and PATTERN in FILE
	local ok=1
	[ "$3" = "$2" ] || ok=
	[ -z "${4-}" ] || grep -q -- "$5" "$4" || ok=
	if [ -n "$ok" ]; then echo "ok   $1"; else
		echo "FAIL $1: exit $3 (want $2)${4:+, '$5' in $4}"; failed=1
	fi
}
# All at once: each waits on the emulated CPU, not on the others. The matrix gets its own run
# directory so that it leaves build/kernels/run/amd64 to the real matrix.
tests/kernels/matrix.py --run-dir "$out/matrix" --vm-smoke-arg=--agent=/bin/false "$k" \
	>"$out/matrix.out" 2>&1 &
p4=$!
scripts/vm-run.sh --quiet --share "$out" "$kdir" -- \
	sh -c "uname -r >$PWD/$out/uname; exit 3" 2>"$out/exit.err" &
p1=$!
scripts/vm-run.sh --quiet --timeout 15 "$kdir" -- sleep 600 2>"$out/hang.err" &
p2=$!
scripts/vm-run.sh --quiet "$kdir" -- sh -c 'echo c >/proc/sysrq-trigger; sleep 60' \
	2>"$out/panic.err" &
p3=$!
wait $p1; check "the command's exit code comes out, and its file through --share" 3 $? \
	"$out/uname" "$(basename "$(ls -d $kdir/lib/modules/*)")"
wait $p2; check "a hung VM is killed at its timeout, its console shown" 124 $? \
	"$out/hang.err" "^--- console of"
wait $p3; check "a kernel that dies under the command is reported" 125 $? \
	"$out/panic.err" "before the command ended"
wait $p4; check "the matrix fails when the smoke suite fails in a VM" 1 $? \
	"$out/matrix.out" "agent.loads_and_attaches: False here, True on the host"
[ $failed = 0 ] || { echo "test_vm_run: failed; outputs in $out" >&2; exit 1; }
