# Phase timing for .ci/run and scripts/test (sourced, bash): `phase NAME COMMAND...` runs the
# command and records its wall seconds and the CPU seconds (user + system) of the processes it
# waited for; the outermost script prints one table of all phases when it exits, failed or not.
# The log is shared with nested scripts through PHASE_LOG.

if [[ -z "${PHASE_LOG:-}" ]]; then
  PHASE_LOG=$(mktemp)
  export PHASE_LOG
  trap phase_summary EXIT
fi

# Sets CHILDREN_CPU to the user + system seconds of this shell's reaped children: the second line
# of `times`, which must run in this shell (in a pipe or $(...) it would time a subshell).
children_cpu() {
  times >"$PHASE_LOG.times"
  CHILDREN_CPU=$(awk 'function sec(x) { split(x, p, "m"); return p[1] * 60 + p[2] }
    NR == 2 { printf "%.1f", sec($1) + sec($2) }' "$PHASE_LOG.times")
}

# Runs "$@" as the phase NAME; a failing command is recorded as FAILED and its status returned.
phase() {
  local name=$1 start=$SECONDS cpu0 status=0
  shift
  children_cpu
  cpu0=$CHILDREN_CPU
  "$@" || status=$?
  children_cpu
  [[ $status == 0 ]] || name="$name (FAILED)"
  printf '%s\t%s\t%s\n' "$name" $((SECONDS - start)) \
    "$(awk -v a="$cpu0" -v b="$CHILDREN_CPU" 'BEGIN { printf "%.1f", b - a }')" >>"$PHASE_LOG"
  return "$status"
}

phase_summary() {
  local status=$?
  {
    echo
    echo "phase times (wall s, CPU s; load average at the end $(cut -d' ' -f1-3 /proc/loadavg)):"
    awk -F'\t' '{ printf "  %-28s %7s %9s\n", $1, $2, $3; w += $2; c += $3 }
      END { printf "  %-28s %7d %9.1f\n", "total", w, c }' "$PHASE_LOG"
  } >&2
  rm -f "$PHASE_LOG" "$PHASE_LOG.times"
  return "$status"
}
