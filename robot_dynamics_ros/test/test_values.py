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
The one per-joint checker (dynamics/values.py) and the settings that go through it.

What it takes, what it refuses and what its refusal says: the parameter's name, how many values,
their bounds and what was given; then that the controller's, the limits', the observer's, the
task law's and the simulator's settings all refuse alike through it; the rules of the
parameters of one number or one word (``OneOf``, ``Number``), which configuration.problem checks.
"""
import dataclasses
import math

import numpy as np
import pytest

from conftest import robot_urdf
from robot_dynamics_ros.control import Controller
from robot_dynamics_ros.control import configuration
from robot_dynamics_ros.control.configuration import observer
from robot_dynamics_ros.dynamics import RobotModel
from robot_dynamics_ros.dynamics.values import Each, Number, OneOf, per_joint
from robot_dynamics_ros.simulation import Simulator
from robot_dynamics_ros.simulation.sensors import Sensors

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO


def test_one_value_is_every_joints_and_one_per_joint_is_taken_as_given():
    assert per_joint(2.0, 3, 'kp').tolist() == [2.0, 2.0, 2.0]
    assert per_joint([2.0], 3, 'kp').tolist() == [2.0, 2.0, 2.0]
    assert per_joint((1, 2, 3), 3, 'kp').tolist() == [1.0, 2.0, 3.0]
    given = np.array([1.0, 2.0])
    out = per_joint(given, 2, 'kp')
    out[0] = 9.0                                    # a new array: the caller's is not touched
    assert given.tolist() == [1.0, 2.0]
    assert per_joint([-1.0, 0.0], 2, 'offset').tolist() == [-1.0, 0.0]     # no bound: any sign


@pytest.mark.parametrize('values, kwargs, says', [
    ([1.0, 2.0], {}, 'kp needs one value or one per joint (3), each finite, got [1.0, 2.0]'),
    ([1.0, np.nan, 1.0], {}, 'kp needs one value or one per joint (3), each finite, got '
                             '[1.0, nan, 1.0] (NaN or Inf)'),
    ([1.0, np.inf, 1.0], {}, 'each finite, got [1.0, inf, 1.0] (NaN or Inf)'),
    ([1.0, -1.0, 1.0], dict(low=0.0), 'each finite >= 0, got [1.0, -1.0, 1.0]'),
    ([1.0, 0.0, 1.0], dict(low=0.0, strict=True), 'each finite > 0'),
    ([1.0, 0.0, 1.0], dict(low=0.0, strict=True, inf=True), 'each > 0, got'),
    ([np.nan] * 3, dict(inf=True), 'kp needs one value or one per joint (3), got'),
    ([1.0], dict(one=False), 'kp needs 3 values (one per joint), each finite, got [1.0]'),
    ('fast', {}, "got 'fast'"),
    ([1.0, 2.0], dict(of='commanded joint'), 'one per commanded joint (3)'),
])
def test_what_cannot_be_is_refused_saying_what_is_needed_and_what_came(values, kwargs, says):
    with pytest.raises(ValueError) as e:
        per_joint(values, 3, 'kp', **kwargs)
    assert says in str(e.value)


@pytest.mark.parametrize('rule, size, good, bad', [
    (Each(0.0, of='commanded joint'), 3, [1.0], [1.0, -1.0, 2.0]),
    (Each(0.0, strict=True, inf=True), 3, [np.inf, 1.0, 2.0], [0.0]),
    (Each(one=False, size=2, of='bound: m, rad'), 0, [-1.0, 2.0], [1.0]),
    (Each(0.0, size=6, of='axis', note='(> 0 on the force axes)'), 0, [0.0], [np.nan]),
])
def test_a_per_joint_rule_checks_what_its_text_says(rule, size, good, bad):
    assert rule.check('x', good, size).shape == (rule.size or size,)
    with pytest.raises(ValueError) as e:
        rule.check('x', bad, size)
    # the refusal says the count and the bounds the text shows
    count = rule.text.split(',')[0].split(' (')[0].replace('one or ', 'one value or ')
    bounds = rule.text.split(', ')[-1].split(' (')[0] if 'each' in rule.text else ''
    assert str(e.value).startswith('x needs ') and bounds in str(e.value), (e.value, rule.text)
    assert count.split(' ')[-1] in str(e.value), (e.value, count)


def test_every_numeric_parameter_of_the_controller_has_its_rule_shown():
    """A number or a list of numbers without a rule shown: only those whose form is their own."""
    from robot_dynamics_ros.nodes.feedforward_declarations import PARAMETERS
    own = {'payload.com', 'payload.inertia', 'task.force_axes', 'limits.workspace',
           'task.max_torque_rate'}          # the deprecated name's check: configuration
    missing = {name for name, (kind, *_) in PARAMETERS.items()
               if kind in (float, 'float[]') and configuration.rule(name) is None}
    assert missing == own


def test_infinity_is_taken_only_where_it_means_no_limit():
    assert per_joint([np.inf, 1.0], 2, 'rate', low=0.0, strict=True, inf=True)[0] == np.inf
    with pytest.raises(ValueError):
        per_joint([np.inf, 1.0], 2, 'rate', low=0.0, strict=True)


@pytest.fixture(scope='module')
def ur5():
    return RobotModel.from_urdf(robot_urdf('ur5'))


@pytest.mark.parametrize('make, says', [
    (lambda m: Controller(m, kp=[1.0, 2.0]), 'kp needs one value or one per commanded joint (6)'),
    (lambda m: Controller(m, kd=[-1.0]), 'kd needs one value or one per commanded joint (6), '
                                         'each finite >= 0, got [-1.0]'),
    (lambda m: Controller(m, damping=[-0.1]), 'damping needs one value or one per model joint'),
    (lambda m: Controller(m, limits=dict(max_torque_rate=[0.0] * 6)),
     'limits.max_torque_rate must be > 0'),
    (lambda m: Controller(m, mode='cartesian_impedance', task=dict(stiffness=[1.0, np.nan])),
     'task.stiffness needs 6 values (one per axis: N/m x3, N m/rad x3), each finite >= 0'),
    (lambda m: Controller(m, mode='cartesian_impedance', task=dict(nullspace_stiffness=[1, 2])),
     'nullspace.stiffness needs one value or one per commanded joint (6)'),
    (lambda m: Controller(m).inverse_dynamics(['shoulder_pan_joint'], [0.0, 1.0]),
     'position needs 1 value (one per name), each finite, got [0.0, 1.0]'),
    (lambda m: Simulator(m, damping=[-1.0]), 'damping needs one value or one per joint (6), '
                                             'each finite >= 0'),
    (lambda m: Simulator(m, max_velocity=0.0), 'max_velocity needs one value or one per joint '
                                               '(6), each finite > 0'),
    (lambda m: Simulator(m, q0=[0.0] * 5), 'initial positions needs one value or one per joint'),
    (lambda m: Sensors(m.n, effort_gain=[0.0]), 'effort_gain needs one value or one per joint '
                                                '(6), each finite > 0'),
    (lambda m: Sensors(m.n, effort_noise=[-0.1]), 'effort_noise needs one value or one per joint '
                                                  '(6), each finite >= 0'),
])
def test_every_layers_settings_refuse_alike_through_the_one_checker(ur5, make, says):
    with pytest.raises(ValueError) as e:
        make(ur5)
    assert says in str(e.value)


def test_the_observers_gains_and_thresholds_go_through_it(ur5):
    values = {'observer.enabled': True, 'observer.gain': [0.0], 'collision.thresholds': [0.0],
              'effort_gain': [1.0], 'state_timeout': 0.1}
    with pytest.raises(ValueError, match=r'observer.gain needs one value or one per joint '
                                         r'\(6\), each finite > 0, got \[0.0\]'):
        observer(Controller(ur5), values)
    values.update({'observer.gain': [50.0], 'collision.thresholds': [1.0, -1.0]})
    with pytest.raises(ValueError, match=r'collision.thresholds needs one value or one per joint '
                                         r'\(6\), each finite >= 0, got \[1.0, -1.0\]'):
        observer(Controller(ur5), values)


def test_the_observers_settings_are_frozen_and_a_kept_observer_takes_the_new_interval(ur5):
    values = {'observer.enabled': True, 'observer.gain': [50.0], 'collision.thresholds': [2.0],
              'effort_gain': [1.0], 'state_timeout': 0.1}
    ctrl = Controller(ur5)
    running, s = observer(ctrl, values)
    assert s.thresholds.tolist() == [2.0] * 6 and s.max_interval == 0.1
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.thresholds = np.zeros(6)
    with pytest.raises(ValueError, match='read-only'):
        s.effort_gain[0] = 2.0
    kept, s2 = observer(ctrl, dict(values, state_timeout=0.3), running)
    assert kept is running and running.max_interval == 0.3 and s2.max_interval == 0.3
    other, _ = observer(ctrl, dict(values, **{'observer.gain': [20.0]}), running)
    assert other is not running and other.gain.tolist() == [20.0] * 6
    off, s3 = observer(ctrl, dict(values, **{'observer.enabled': False}), running)
    assert off is None and not s3.enabled and s3.thresholds.tolist() == [2.0] * 6


# ---- the rules of the parameters of one number or one word ----------------------------------
@pytest.mark.parametrize('rule, good, bad, says', [
    (OneOf(('zero', 'gravity')), 'zero', 'hold',
     'on_timeout must be one of (\'zero\', \'gravity\'), got "hold"'),
    (Number(0.0, strict=True), 1e-3, 0.0, 'state_timeout must be > 0, got 0.0'),
    (Number(0.0, note='(0: never)'), math.inf, -1,
     'state_timeout must be >= 0 (0: never), got -1'),
    (Number(0.0, strict=True, inf=False, note='(Hz)'), 10.0, math.inf,
     'state_timeout must be > 0 and finite (Hz), got inf'),
    (Number(0.0, high=1.0), 1.0, 1.5, 'state_timeout must be >= 0 and <= 1, got 1.5'),
    (Number(0.0), 0.0, math.nan, 'state_timeout must be >= 0, got nan'),
    (Number(0.0), 0.0, 'fast', 'state_timeout must be >= 0, got fast'),
])
def test_a_rule_takes_what_it_says_and_refuses_the_rest_naming_it(rule, good, bad, says):
    name = 'on_timeout' if isinstance(rule, OneOf) else 'state_timeout'
    assert rule.check(name, good) == good
    with pytest.raises(ValueError) as e:
        rule.check(name, bad)
    assert str(e.value) == says
    # what the descriptor shows is what the refusal says the value must be
    if isinstance(rule, OneOf):
        assert rule.text == 'one of zero, gravity'
    else:
        assert f'must be {rule.text}, got' in says


def test_every_rule_is_of_a_declared_parameter_and_refuses_through_problem():
    # the rules are the checks of configuration.problem and the descriptors' constraints: a rule
    # for a name the node does not declare would check nothing
    from robot_dynamics_ros.nodes.feedforward_declarations import PARAMETERS
    values = {name: d[1] for name, d in PARAMETERS.items()}
    assert configuration.problem(values) is None
    for name, rule in configuration.RULES.items():
        assert name in PARAMETERS, name
        bad = 'no such choice' if isinstance(rule, OneOf) else -1.0
        assert configuration.problem(dict(values, **{name: bad})).startswith(
            f'{name} must be '), name
    # the per-joint constraints, declared once the model is known
    bad = dict(values, **{'constraints.elbow_joint.goal': math.nan})
    assert configuration.problem(bad) == ('constraints.elbow_joint.goal must be >= 0 and finite '
                                          '(0: not checked), got nan')
