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

"""simulation.lockstep.LockstepAnswers: when commands without answers are said (no ROS)."""
import pytest

from robot_dynamics_ros.simulation.lockstep import LockstepAnswers, UNANSWERED

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]


def test_commands_without_answers_are_said_after_unanswered_resends_in_a_row():
    a = LockstepAnswers()
    said = []
    for _ in range(UNANSWERED + 2):
        a.commanded()                   # the controller commands the re-sent state
        said.append(a.resent_state())
    assert said == [False] * (UNANSWERED - 1) + [True] * 3


def test_a_resend_with_no_command_waiting_is_not_counted():
    a = LockstepAnswers()
    for _ in range(3 * UNANSWERED):     # a stalled controller: no command comes
        assert not a.resent_state()
    assert a.unanswered == 0


def test_an_answer_in_time_ends_the_run_and_a_late_one_does_not():
    a = LockstepAnswers()
    for _ in range(UNANSWERED - 1):
        a.commanded()
        a.resent_state()
    a.answered()                        # late: the state had to go out again first
    a.stepped()
    assert a.unanswered == UNANSWERED - 1
    a.commanded()
    a.answered()                        # in time: before any re-send
    a.stepped()
    assert a.unanswered == 0 and not a.awaiting and not a.resent


def test_reset_forgets_everything():
    a = LockstepAnswers()
    for _ in range(UNANSWERED):
        a.commanded()
        a.resent_state()
    a.commanded()
    a.reset()
    assert (a.awaiting, a.resent, a.unanswered) == (False, False, 0)
