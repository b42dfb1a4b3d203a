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

"""
The ROS 2 adapters: the only place that imports rclpy or messages.

``feedforward_node`` (the controller) and ``simulator_node`` (the ABA simulator) translate topics,
services and parameters into calls of ``control`` and ``simulation``. What both share, by concern:
``description`` (where robot_description comes from), ``parameters`` (declarations, --help),
``logs`` (throttled logging), ``executors`` (the hot input's thread, executors, shutdown, main()).
"""


def _main(module, args=None):
    """
    Import a node module and run its main().

    The import takes a second, and compiles the numba kernels on a fresh install. A Ctrl-C or
    SIGTERM then ends the process at once with status 0: nothing needs cleaning up before
    rclpy.init. Not by raising KeyboardInterrupt, as Python's default handler does: raised
    inside a ctypes callback of numba's LLVM (loading a cached kernel) it is printed and lost, and
    the node went on to run, deaf to the signal it had been sent; raised inside a C extension's
    initialisation it becomes an ImportError. main() installs the handlers of a running node.
    """
    import importlib
    import os
    import signal
    import sys

    def exit_now(signum, frame):
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(0)
    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, exit_now)
    return importlib.import_module(f'{__name__}.{module}').main(args)


def feedforward_main(args=None):
    """Run the ``feedforward_node`` console script."""
    return _main('feedforward_node', args)


def simulator_main(args=None):
    """Run the ``simulator_node`` console script."""
    return _main('simulator_node', args)
