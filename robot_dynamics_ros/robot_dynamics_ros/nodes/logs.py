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

"""Logging of both nodes: lines throttled per reason, a severity chosen at run time, start time."""
import os
import time


def _process_start():
    """Return when this process started, on time.monotonic's clock (Linux; else: now)."""
    try:
        with open('/proc/self/stat') as f:
            ticks = int(f.read().rsplit(')', 1)[1].split()[19])     # field 22, starttime
        with open('/proc/uptime') as f:
            uptime = float(f.read().split()[0])
        return time.monotonic() - (uptime - ticks / os.sysconf('SC_CLK_TCK'))
    except (OSError, ValueError, IndexError):
        return time.monotonic()


STARTED = _process_start()     # for the start-up log


class Throttle:
    """
    A log line at most once per `period` seconds (default 5) per key.

    (rclpy throttles per call site, which would hide a second, different reason logged from the
    same line.)
    """

    def __init__(self, logger):
        self.logger = logger
        self.last = {}
        self.said = set()

    def warning(self, key, message, period=5.0):
        self.log('warning', key, message, period)

    def info(self, key, message, period=5.0):
        self.log('info', key, message, period)

    def log(self, level, key, message, period=5.0):
        now = time.monotonic()
        if now - self.last.get(key, -1e9) >= period:
            self.last[key] = now
            log_at(self.logger, level, message)

    def error(self, message):
        """Log an error, every time."""
        self.logger.error(message)

    def once(self, key, message, level='warning'):
        """Log a line once per key for the life of the node."""
        if key not in self.said:
            self.said.add(key)
            log_at(self.logger, level, message)


def log_at(logger, level, message):
    """
    Call logger.<level>(message).

    rclpy refuses one call site at two severities, so each level gets its own line here.
    """
    if level == 'info':
        logger.info(message)
    elif level == 'error':
        logger.error(message)
    else:
        logger.warning(message)
