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
A bound on a node's clean-up after a stop, kept by a native thread that needs no GIL.

rclpy's ``destroy_node`` can hang inside ``rcl_node_fini`` (DDS teardown: seen three times in CI,
over 4 s, once a whole CI run lost to it). The hang sits in C++ called with the GIL held, so no
Python thread can end the process: a ``threading.Timer`` never runs, and faulthandler's C thread
can only exit with status 1. :class:`ExitWatchdog` starts a POSIX thread running a function
compiled by numba (``cfunc``): it sleeps, and unless disarmed by then writes its message to
stderr and calls ``_exit(0)``. Status 0 because the node's work is done: a stop was asked for
and only the release of DDS resources, which the kernel reclaims at exit anyway, did not end.
"""
import ctypes
import sys

import numpy as np
from numba import cfunc, types

from ..dynamics.kernels import cached_result

# the slots of the watchdog's int64 array, read by the native thread
DISARMED, MICROSECONDS, MESSAGE, LENGTH = range(4)

_libc = ctypes.CDLL(None)

# libc's, called by symbol (numba's cache can keep no ctypes object); write(2)'s buffer as an
# integer: the slots hold the message's address as an int64
_usleep = types.ExternalFunction('usleep', types.int32(types.uint32))
_write = types.ExternalFunction('write', types.intp(types.int32, types.int64, types.uint64))
_exit_now = types.ExternalFunction('_exit', types.void(types.int32))


def _watch(slots):
    """Sleep, then unless disarmed write the message and end the process with status 0."""
    microseconds = slots[MICROSECONDS]
    while microseconds > 0:             # POSIX's usleep takes less than a second
        step = min(microseconds, 500_000)
        _usleep(step)
        microseconds -= step
    if slots[DISARMED] == 0:
        _write(2, slots[MESSAGE], slots[LENGTH])
        _exit_now(0)
    return 0


_kernel = None


# void *(*)(void *): the intp returned is its void *
_SIGNATURE = types.intp(types.CPointer(types.int64))


def _address_from_cache():
    """
    Return the address of _watch's machine code loaded from numba's cache, or None.

    With ``kernels.cached_result``: numba's own load (``cfunc(cache=True)``) first refreshes
    the target context, which imports every implementation numba registers, SciPy's linalg
    among them: 0.33-0.47 CPU-s at every node's stop (measured). Returns (address, the library
    that owns the code). With other numba internals (an AttributeError) or a cache without it,
    None: numba's own path then.
    """
    from numba.core.ccallback import CFunc
    try:
        function = CFunc(_watch, ([_SIGNATURE.args[0]], _SIGNATURE.return_type), {}, {})
        function.enable_caching()
        cres = cached_result(function, function._sig, function._targetdescr.target_context)
        if cres is None:
            return None
        return cres.library.get_pointer_to_function(cres.fndesc.llvm_cfunc_wrapper_name), \
            cres.library
    except AttributeError:
        return None


def compile_watchdog():
    """Return the address of _watch compiled as a pthread start routine (cached by numba)."""
    global _kernel
    if _kernel is None:
        # (address, what owns the machine code: kept as long as the process lives)
        _kernel = _address_from_cache()
        if _kernel is None:
            function = cfunc(_SIGNATURE, cache=True)(_watch)
            _kernel = function.address, function
    return _kernel[0]


class ExitWatchdog:
    """
    End the process with status 0 after ``seconds`` unless :meth:`disarm` is called first.

    The message is written to stderr first. Arming costs a thread start (and, the first time
    in an installation, numba's compile of the thread function, ~0.3 s; later it is loaded from
    numba's cache).
    """

    def __init__(self, seconds, message):
        self._message = ctypes.create_string_buffer(message.encode() + b'\n')
        self._slots = np.zeros(4, np.int64)
        self._slots[MICROSECONDS] = int(seconds * 1e6)
        self._slots[MESSAGE] = ctypes.addressof(self._message)
        self._slots[LENGTH] = len(self._message) - 1        # without the terminating NUL
        thread = ctypes.c_ulong()
        start = ctypes.c_void_p(compile_watchdog())
        if _libc.pthread_create(ctypes.byref(thread), None, start,
                                ctypes.c_void_p(self._slots.ctypes.data)) != 0:
            raise OSError('pthread_create failed')
        _libc.pthread_detach(thread)
        # the thread reads the slots and the message until it wakes: they live as long as the
        # process (a disarmed watchdog's thread may still be asleep when this object is dropped)
        _ARMED.append(self)

    def disarm(self):
        """Let the process end by itself: the thread, when it wakes, returns without a word."""
        self._slots[DISARMED] = 1


_ARMED = []


def exit_watchdog(seconds, message):
    """Return an armed :class:`ExitWatchdog`, or None (said on stderr) where none can start."""
    try:
        return ExitWatchdog(seconds, message)
    except Exception as e:          # noqa: B902 - a platform without it: the caller falls back
        print(f'no exit watchdog ({type(e).__name__}: {e})', file=sys.stderr)
        return None
