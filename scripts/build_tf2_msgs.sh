#!/usr/bin/env bash
# Build the tf2_msgs interface package (TFMessage only) with rosidl into a venv of ROS 2 wheels.
#
# Usage: build_tf2_msgs.sh VENV
# No wheel carries tf2_msgs, and /tf needs tf2_msgs/TFMessage. The wheels ship the rosidl
# generators and ament_cmake; what they get wrong is fixed here first:
#   * thirteen export_*__rosidl_generator_pyExport.cmake files hard-code the Python and numpy
#     include folders of the machine that built the wheels (/opt/python/cp311-cp311/...);
#     they are rewritten to this interpreter's folders, or cmake configure fails.
# Skips the build when tf2_msgs already imports.
set -euo pipefail

venv=$(cd "$1" && pwd)
python="$venv/bin/python"
log() { printf '[tf2_msgs] %s\n' "$*" >&2; }

if "$python" -c 'import tf2_msgs.msg' >/dev/null 2>&1; then
    log "already built"
    exit 0
fi

python_include=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
numpy_include=$("$python" -c 'import numpy; print(numpy.get_include())')
[ -f "$python_include/Python.h" ] || { log "error: Python headers missing in $python_include (install python3-dev)"; exit 1; }
grep -l '/opt/python/cp311-cp311' "$venv"/share/*/cmake/*.cmake 2>/dev/null | while read -r file; do
    sed -i -e "s#/opt/python/cp311-cp311/include/python3.11#$python_include#g" \
           -e "s#/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include#$numpy_include#g" \
           "$file"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src="$work/tf2_msgs"
mkdir -p "$src/msg" "$work/build"
# The message definition of ros2/geometry2 tf2_msgs/msg/TFMessage.msg.
echo 'geometry_msgs/TransformStamped[] transforms' > "$src/msg/TFMessage.msg"
cat > "$src/package.xml" <<'XML'
<?xml version="1.0"?>
<package format="3">
  <name>tf2_msgs</name>
  <version>0.42.0</version>
  <description>tf2_msgs/TFMessage, built by tendon_robot_sim for a venv of ROS 2 wheels.</description>
  <maintainer email="maintainers@tendon-robot-sim.invalid">tendon_robot_sim</maintainer>
  <license>BSD-3-Clause</license>
  <buildtool_depend>ament_cmake</buildtool_depend>
  <buildtool_depend>rosidl_core_generators</buildtool_depend>
  <depend>geometry_msgs</depend>
  <exec_depend>rosidl_core_runtime</exec_depend>
  <member_of_group>rosidl_interface_packages</member_of_group>
  <export><build_type>ament_cmake</build_type></export>
</package>
XML
cat > "$src/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.8)
project(tf2_msgs)
find_package(ament_cmake REQUIRED)
find_package(geometry_msgs REQUIRED)
# The wheels carry rosidl_core_generators, not rosidl_default_generators.
find_package(rosidl_core_generators REQUIRED)
rosidl_generate_interfaces(${PROJECT_NAME} "msg/TFMessage.msg" DEPENDENCIES geometry_msgs)
ament_export_dependencies(rosidl_core_runtime)
ament_package()
CMAKE

log "building into $venv"
(
    cd "$work/build"
    export PATH="$venv/bin:$PATH"
    cmake "$src" -DCMAKE_INSTALL_PREFIX="$venv" -DCMAKE_PREFIX_PATH="$venv" \
        -DPython3_EXECUTABLE="$python" -DBUILD_TESTING=OFF > cmake.log 2>&1 \
        && make -j"$(nproc)" > make.log 2>&1 \
        && make install > install.log 2>&1
) || { log "error: build failed; last lines:"; tail -n 30 "$work"/build/*.log >&2; exit 1; }
"$python" -c 'import tf2_msgs.msg' || { log "error: built, but tf2_msgs does not import"; exit 1; }
log "done"
