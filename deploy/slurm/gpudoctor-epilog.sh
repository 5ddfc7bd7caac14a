#!/bin/sh
# Slurm Epilog for jobs watched by `gpudoctor run --watch` (docs/run.md,
# "Watching the job"): appends each watched step's health summary to the
# job's own output file, so the diagnosis sits next to the job's logs.
#
# The job step writes its summary where this script looks:
#   srun gpudoctor run --watch \
#        --summary-file "/var/tmp/gpudoctor/$SLURM_JOB_ID.$SLURM_STEP_ID.$SLURM_PROCID.txt" \
#        -- python train.py
# (run --watch prints the same summary on the step's standard error; this
# brings every rank's together at the end of the job's output, and keeps it
# when the step's stderr went elsewhere.)
#
# slurmd runs the Epilog as SlurmdUser (root) with SLURM_JOB_ID set and no
# PATH. Install as /etc/slurm/gpudoctor-epilog.sh (0755, root) and in
# slurm.conf: Epilog=/etc/slurm/gpudoctor-epilog.sh (or call it from your
# Epilog); make the directory on every node, writable by all, sticky:
#   install -d -m 1777 /var/tmp/gpudoctor
# Settings (environment):
#   GPUDOCTOR_WATCH_DIR  where the summaries are    (default /var/tmp/gpudoctor)
#   SLURM_CONF           slurm.conf scontrol reads  (as gpudoctor-healthcheck.sh)
# Exits 0 whatever happens: a failed epilog drains the node, and a missing
# summary is no reason to.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
dir=${GPUDOCTOR_WATCH_DIR:-/var/tmp/gpudoctor}
[ -n "${SLURM_JOB_ID:-}" ] || exit 0
set -- "$dir/$SLURM_JOB_ID".*.txt
[ -f "$1" ] || exit 0
job=$(scontrol show job "$SLURM_JOB_ID" 2>/dev/null) || exit 0
# The job's StdOut as Slurm expanded it (%j and the like filled in), and
# its owner's numeric ids.
out=$(printf '%s\n' "$job" | sed -n 's/^ *StdOut=//p' | head -n 1)
uid=$(printf '%s\n' "$job" | sed -n 's/.*UserId=[^(]*(\([0-9]*\)).*/\1/p' | head -n 1)
gid=$(printf '%s\n' "$job" | sed -n 's/.*GroupId=[^(]*(\([0-9]*\)).*/\1/p' | head -n 1)
for f in "$@"; do
  if [ -n "$out" ] && [ -n "$uid" ] && [ -n "$gid" ] && [ -f "$f" ]; then
    # As the job's user, not root: the directory is shared, so a summary
    # or the output path may be a symlink, and root must neither read nor
    # write through one. 64 KiB at most per summary.
    # shellcheck disable=SC2016 # $1 and $2 are the inner shell's
    setpriv --reuid="$uid" --regid="$gid" --clear-groups \
      sh -c 'head -c 65536 "$1" >>"$2"' sh "$f" "$out" 2>/dev/null
  fi
  rm -f "$f"
done
exit 0
