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
Numba's cache, made to notice a change of the dynamics core.

Numba keys a cached function by the content of its own source file only. The compiled functions
of other files (the simulator's step, the momentum observer's) call the core's (``kernels.py``,
``spatial.py``), whose machine code is compiled into theirs: after an update that changes the
core but not, say, ``simulator.py``, numba loads the simulator's old machine code, old core
included. That is silently wrong as soon as the core changes the meaning of its data (seen: a
pendulum that no longer swung once the packed ``jtype`` learnt coordinate axes; pip leaves
numba's cache files behind on an upgrade, and colcon's ``--symlink-install`` keeps them too).
``install`` (run when this module is imported: ``kernels.py`` imports it before ``spatial.py``,
so before any compiled function is declared) makes numba key every cached function of this
package by its own file and the core's files together.
"""
import functools
import hashlib
import os

from numba.core import caching

_HERE = os.path.dirname(os.path.abspath(__file__))
_PACKAGE = os.path.dirname(_HERE) + os.sep          # robot_dynamics_ros/ (installed or source)
# the simulator's contact (``simulation/contact.py``) is compiled into its step the same way
CORE = ('kernels.py', 'spatial.py', 'frames.py', 'linalg.py',
        os.path.join('..', 'simulation', 'contact.py'))


@functools.lru_cache(maxsize=None)
def core_digest():
    """Return the sha256 of the core's sources (read once a process)."""
    h = hashlib.sha256()
    for name in CORE:
        with open(os.path.join(_HERE, name), 'rb') as f:
            h.update(f.read())
    return h.digest()


def _keyed_by_the_core(base):
    """Return a subclass of numba's locator ``base`` for this package's files only."""
    class Locator(base):
        @classmethod
        def from_function(cls, py_func, py_file):
            if not os.path.abspath(py_file).startswith(_PACKAGE):
                return None
            return super().from_function(py_func, py_file)

        def get_source_stamp(self):
            return super().get_source_stamp(), core_digest()
    Locator.__name__ = Locator.__qualname__ = 'Core' + base.__name__.lstrip('_')
    return Locator


def install():
    """Put this package's locators before numba's (once); with other numba internals, nothing."""
    impl = getattr(caching, 'CacheImpl', None) or getattr(caching, '_CacheImpl', None)
    bases = [getattr(caching, name, None) or getattr(caching, '_' + name, None)
             for name in ('UserProvidedCacheLocator', 'InTreeCacheLocator',
                          'UserWideCacheLocator')]
    if impl is None or None in bases or not hasattr(impl, '_locator_classes'):
        return False
    if not getattr(impl, '_robot_dynamics_core', False):
        impl._locator_classes = [_keyed_by_the_core(b) for b in bases] + impl._locator_classes
        impl._robot_dynamics_core = True
    return True


INSTALLED = install()
