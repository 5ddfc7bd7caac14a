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
# slurmd runs the Epilog as SlurmdUser (root) with SLURM_JOB_ID,
# SLURM_JOB_UID and SLURM_JOB_GID set and no PATH. Install as
# /etc/slurm/gpudoctor-epilog.sh (0755, root) and in slurm.conf:
# Epilog=/etc/slurm/gpudoctor-epilog.sh (or call it from your Epilog); make
# the directory on every node, root's, writable by all, sticky:
#   install -d -o root -g root -m 1777 /var/tmp/gpudoctor
# Settings (environment):
#   GPUDOCTOR_WATCH_DIR  where the summaries are    (default /var/tmp/gpudoctor)
#   GPUDOCTOR_WATCH_MAX  summaries appended per job and node (default 256)
#   SLURM_CONF           slurm.conf scontrol reads  (as gpudoctor-healthcheck.sh)
# Exits 0 whatever happens: a failed epilog drains the node, and a missing
# summary is no reason to. What it refuses it says on standard error and to
# syslog (tag gpudoctor-epilog).
#
# Everything the job's user controls is treated as hostile, because this
# runs as root (docs/run.md, "The Epilog's safety"):
# - the owner's ids come from slurmd (SLURM_JOB_UID/GID), never from
#   scontrol's text, where a job name can print "UserId=root(0)"; scontrol's
#   own UserId field, matched by its exact name at the start of a line, must
#   agree, or nothing is appended;
# - only summaries owned by that uid are read, and they are read, and the
#   output written, as that user (setpriv), so a symlink anywhere gives no
#   root access and another user's file never reaches this job's output;
# - the directory must be root's and sticky, and is entered once (cd -P), so
#   a directory replaced or symlinked later cannot send root's removals
#   elsewhere; files are found and removed with find, which follows no link;
# - at most GPUDOCTOR_WATCH_MAX summaries, 64 KiB each, in one process, and
#   the user's part and scontrol are bounded in time (an output file that is
#   a FIFO, a controller that does not answer).
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
dir=${GPUDOCTOR_WATCH_DIR:-/var/tmp/gpudoctor}
max=${GPUDOCTOR_WATCH_MAX:-256}
job_id=${SLURM_JOB_ID:-}

say() {
  printf 'gpudoctor-epilog: job %s: %s\n' "$job_id" "$*" >&2
  logger -t gpudoctor-epilog -- "job $job_id: $*" 2>/dev/null || true
}
is_number() {
  case $1 in '' | *[!0-9]*) return 1 ;; *) return 0 ;; esac
}

is_number "$job_id" || exit 0
is_number "$max" || max=256
[ -d "$dir" ] || exit 0 # not set up on this node: nothing to do
if [ -L "$dir" ]; then
  say "refused $dir: it is a symlink"
  exit 0
fi
cd -P -- "$dir" 2>/dev/null || exit 0
# From here on every name is relative to the directory just checked.
owner_mode=$(stat -c '%u %a' . 2>/dev/null) || exit 0
owner=${owner_mode% *}
mode=${owner_mode#* }
if [ "$owner" != 0 ] || [ $((0$mode & 01000)) -eq 0 ]; then
  say "refused $dir: owner uid $owner, mode $mode; it must be root's and sticky (install -d -o root -m 1777 $dir)"
  exit 0
fi

# This job's files, as find names them ("./123.0.0.txt"): regular files only.
pattern="$job_id.*.txt"
count() { find . -maxdepth 1 -name "$pattern" "$@" -printf . | wc -c; }
remove_all() { find . -maxdepth 1 -name "$pattern" \( -type f -o -type l \) -delete; }
[ "$(count \( -type f -o -type l \))" -gt 0 ] || exit 0

uid=${SLURM_JOB_UID:-}
gid=${SLURM_JOB_GID:-}
if ! is_number "$uid" || ! is_number "$gid"; then
  say "no SLURM_JOB_UID/SLURM_JOB_GID from slurmd: nothing appended"
  remove_all
  exit 0
fi

# scontrol's multi-line form puts the owner on a line of its own:
#   JobId=123 JobName=train
#      UserId=alice(1000) GroupId=alice(1000) MCS_label=N/A
#      ...
#      StdOut=/home/alice/slurm-123.out
# A field counts only at the start of a line; every such line must agree.
# Bounded: an unreachable controller keeps scontrol retrying (18 s seen).
job=$(timeout -k 5 20 scontrol show job "$job_id" 2>/dev/null) || job=""
owners=$(printf '%s\n' "$job" | sed -n 's/^ *UserId=[^ ]*(\([0-9]*\)) .*/\1/p' | sort -u)
outs=$(printf '%s\n' "$job" | sed -n 's/^ *StdOut=//p')
if [ -z "$owners" ]; then
  say "scontrol show job $job_id gave no UserId (no answer within 20 s?): nothing appended"
  remove_all
  exit 0
fi
if [ "$owners" != "$uid" ]; then
  say "scontrol's UserId ($(printf '%s' "$owners" | tr '\n' ' ')) is not slurmd's SLURM_JOB_UID $uid: nothing appended"
  remove_all
  exit 0
fi
case $outs in
  /*) ;;
  *)
    say "no single StdOut path in scontrol show job: nothing appended"
    remove_all
    exit 0
    ;;
esac
if [ "$(printf '%s\n' "$outs" | wc -l)" -ne 1 ]; then
  say "more than one StdOut line in scontrol show job: nothing appended"
  remove_all
  exit 0
fi

own=$(count -type f -user "$uid")
other=$(count ! \( -type f -user "$uid" \))
[ "$other" -eq 0 ] || say "skipped $other file(s) named $pattern not owned by uid $uid or not regular"
[ "$own" -le "$max" ] || say "appended $max of $own summaries (GPUDOCTOR_WATCH_MAX=$max)"
if [ "$own" -gt 0 ]; then
  # As the job's user: reading a summary and opening the output file can
  # reach only what that user could reach. One head for all the files: the
  # first 64 KiB of each, in rank order.
  # shellcheck disable=SC2016 # $1.. are the inner shell's
  timeout -k 5 30 setpriv --reuid="$uid" --regid="$gid" --clear-groups \
    sh -c 'find . -maxdepth 1 -name "$1" -type f -user "$2" -print0 | sort -zV |
           head -z -n "$3" | xargs -0r head -q -c 65536 -- >>"$4"' \
    sh "$pattern" "$uid" "$max" "$outs" 2>/dev/null ||
    say "could not append to $outs as uid $uid"
fi
remove_all
exit 0
