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

"""Output messages made once and filled for each publish (the 1 kHz streams' buffers)."""
import array

import numpy as np


def field_view(msg, field, n):
    """
    Set a float64[] ``field`` of ``msg`` to n zeros; return a numpy view of the message's array.

    Writing the view updates the message: no conversion, allocation or per-element check per
    publish (the field's setter would copy a new array each time).
    """
    setattr(msg, field, array.array('d', bytes(8 * n)))
    return np.frombuffer(getattr(msg, field), dtype=np.float64)
