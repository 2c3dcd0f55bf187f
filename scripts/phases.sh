# Phase timing for .ci/run and scripts/test (sourced, bash): `phase NAME COMMAND...` runs the
# command and records its wall seconds and the CPU seconds (user + system) of the processes it
# waited for; the outermost script prints one table of all phases when it exits, failed or not.
# The log is shared with nested scripts through PHASE_LOG.

if [[ -z "${PHASE_LOG:-}" ]]; then
  PHASE_LOG=$(mktemp)
  export PHASE_LOG
  trap phase_summary EXIT
fi
PHASE_RUNNING=""

# User + system seconds of this shell's reaped children: the second line of `times`, which must
# run in this shell (in a pipe or $(...) it would time a subshell) and is read from a file here.
children_cpu() {
  awk 'function sec(x) { split(x, p, "m"); return p[1] * 60 + p[2] }
    NR == 2 { printf "%.1f", sec($1) + sec($2) }' "$PHASE_LOG.times"
}

phase() {
  local name=$1 start=$SECONDS cpu0 cpu1
  shift
  times >"$PHASE_LOG.times"
  cpu0=$(children_cpu)
  PHASE_RUNNING=$name
  "$@"
  PHASE_RUNNING=""
  times >"$PHASE_LOG.times"
  cpu1=$(children_cpu)
  printf '%s\t%s\t%s\n' "$name" $((SECONDS - start)) \
    "$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN { printf "%.1f", b - a }')" >>"$PHASE_LOG"
}

phase_summary() {
  local status=$?
  [[ -n "$PHASE_RUNNING" ]] && printf '%s\tFAILED\t-\n' "$PHASE_RUNNING" >>"$PHASE_LOG"
  {
    echo
    echo "phase times (wall s, CPU s; load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)):"
    awk -F'\t' '{ printf "  %-24s %7s %9s\n", $1, $2, $3; if ($2 != "FAILED") { w += $2; c += $3 } }
      END { printf "  %-24s %7d %9.1f\n", "total", w, c }' "$PHASE_LOG"
  } >&2
  rm -f "$PHASE_LOG" "$PHASE_LOG.times"
  return "$status"
}
