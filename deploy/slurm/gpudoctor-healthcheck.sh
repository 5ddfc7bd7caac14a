#!/bin/sh
# Slurm's HealthCheckProgram for GPU nodes: runs `gpudoctor check --slurm`
# (docs/slurm.md). Install it as /usr/local/sbin/gpudoctor-healthcheck
# (mode 0755, owned by root) and point slurm.conf at it (slurm.conf.example).
#
# Why a wrapper: slurmd runs the HealthCheckProgram with no arguments and an
# almost empty environment (only SLURMD_NODENAME: no PATH, no SLURM_CONF).
# Without SLURM_CONF, scontrol looks for /etc/slurm/slurm.conf and then for a
# DNS SRV record ("fetch_config: DNS SRV lookup failed"). slurmd ignores the
# exit status: gpudoctor drains and resumes the node itself with scontrol and
# prints one line saying what it did.
#
# Settings (environment, or edit here):
#   GPUDOCTOR        the gpudoctor binary        (default: gpudoctor on PATH)
#   SLURM_CONF       slurm.conf scontrol reads   (default: /etc/slurm/slurm.conf, else
#                    configless slurmd's cache /run/slurm/conf/slurm.conf)
#   GPUDOCTOR_SLURM_ARGS  more options for `gpudoctor check`, e.g.
#                    "--slurm-drain-on warn --config /etc/gpudoctor/config.toml"
# Arguments given to this script are passed on to `gpudoctor check` too.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
if [ -z "${SLURM_CONF:-}" ]; then
  for conf in /etc/slurm/slurm.conf /run/slurm/conf/slurm.conf; do
    if [ -r "$conf" ]; then
      SLURM_CONF=$conf
      export SLURM_CONF
      break
    fi
  done
fi
# GPUDOCTOR_SLURM_ARGS is split on spaces on purpose (no quoting inside it).
# shellcheck disable=SC2086
exec "${GPUDOCTOR:-gpudoctor}" check --slurm ${GPUDOCTOR_SLURM_ARGS:-} "$@"
