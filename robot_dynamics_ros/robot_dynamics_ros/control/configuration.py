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
What feedforward_node's parameter values mean, without ROS.

Their checks, and the controller and observer built from them.

``values`` is the dict of parameter values by name (the node's declarations name them); the
functions raise ValueError or return the reason a set of values is refused.
"""
import numpy as np

from .controller import MODES, RULES as CONTROLLER_RULES, TIMEOUT_BEHAVIOURS, Controller, \
    default_joints
from .force import RULES as FORCE_RULES, check as check_force
from .limits import MAX_TORQUE_RATE, RULES as LIMIT_RULES, check as check_limits
from ..dynamics.values import Number, OneOf
from .observer import REACTIONS, RULES as OBSERVER_RULES, MomentumObserver, \
    check as check_observer
from .task_space import PROJECTORS

TORQUE_SOURCES = ('auto', 'measured', 'commanded')
SCALINGS = ('off', 'reject', 'scale')


# what each parameter of one number or one word must be: checked by ``problem``, shown by the
# node's parameter descriptors (``ros2 param describe``), --help and the reference. The rules of
# the controller's, observer's, force and limits parameters (per-joint ones among them) live
# where they are checked once the model is known (their modules' RULES); ``rule`` finds any
RULES = {
    'mode': OneOf(MODES),
    'on_timeout': OneOf(TIMEOUT_BEHAVIOURS),
    'state_timeout': Number(0.0, strict=True),
    'rate': Number(0.0),
    'observer.torque_source': OneOf(TORQUE_SOURCES),
    'trajectory_scaling': OneOf(SCALINGS),
    'torques_every': Number(0.0, note='(0: never)'),
    'external_torques_every': Number(0.0, note='(0: never)'),
    'nullspace.projector': OneOf(PROJECTORS),
    'task.target_timeout': Number(0.0, note='(0: never)'),
    'constraints.goal_time': Number(0.0, inf=False, note='(0: no limit)'),
    'action_monitor_rate': Number(0.0, strict=True, inf=False, note='(Hz)'),
    'collision.reaction': OneOf(REACTIONS),
}
# constraints.<joint>.trajectory and .goal, declared per joint once the model is known
JOINT_CONSTRAINT = Number(0.0, inf=False, note='(0: not checked)')


def rule(name):
    """Return the rule of parameter ``name`` (None: it has none: a word, a list of names ...)."""
    if name.startswith('limits.'):                          # (checked by limits.check)
        key = name[len('limits.'):]
        return MAX_TORQUE_RATE if key == 'max_torque_rate' else LIMIT_RULES.get(key)
    for rules in (CONTROLLER_RULES, OBSERVER_RULES, FORCE_RULES):   # checked where taken
        if name in rules:
            return rules[name]
    return _own_rule(name)


def _own_rule(name):
    """Return the rule ``problem`` checks parameter ``name`` by itself (None: none)."""
    if name in RULES:
        return RULES[name]
    return JOINT_CONSTRAINT if name.startswith('constraints.') else None


def problem(v):
    """Return why the values ``v`` are refused (None: they are fine)."""
    try:
        for name, value in v.items():
            r = _own_rule(name)
            if r is not None:
                r.check(name, value)
    except ValueError as e:
        return str(e)
    old = np.asarray(v['task.max_torque_rate'], dtype=float)
    if old.size and not np.all(old > 0):
        return f'task.max_torque_rate must be > 0, got {old.tolist()}'
    try:
        check_limits(limit_settings(v))
        check_force(force_settings(v))
    except ValueError as e:
        return str(e)
    if any(v['task.force_axes']) and v['mode'] not in ('cartesian_impedance',
                                                       'operational_space'):
        return (f'task.force_axes selects force axes but mode "{v["mode"]}" has no task control: '
                f'force control runs in cartesian_impedance and operational_space')
    return None


def force_settings(v):
    """Return the force control settings the values describe (see ``control.force``)."""
    return dict(axes=v['task.force_axes'], source=v['force.source'], topic=v['force.topic'],
                gain=v['force.gain'], integral_gain=v['force.integral_gain'],
                damping=v['force.damping'], max_speed=v['force.max_speed'],
                timeout=v['force.timeout'])


def payload(v):
    """Return the payload the values describe (see ``controller.payload_model``)."""
    return {'link': v['payload.link'], 'mass': v['payload.mass'], 'com': v['payload.com'],
            'inertia': v['payload.inertia']}


def task(v):
    """Return the task-space settings the values describe (see ``Controller.set_task``)."""
    return dict(frame=v['task.frame'], stiffness=v['task.stiffness'],
                damping_ratio=v['task.damping_ratio'], min_damping=v['task.min_damping'],
                max_error=v['task.max_error'],
                nullspace_stiffness=v['nullspace.stiffness'],
                nullspace_damping_ratio=v['nullspace.damping_ratio'],
                posture=v['nullspace.posture'], projector=v['nullspace.projector'])


def torque_rate(v):
    """
    Return the torque rate the values give: limits.max_torque_rate, else the deprecated name's.

    ``task.max_torque_rate`` (formerly the task modes' own rate limit) is taken as
    ``limits.max_torque_rate`` when that is empty: one rate limit, in every mode.
    """
    return v['limits.max_torque_rate'] or v['task.max_torque_rate']


def deprecations(v):
    """Return what the values use that is deprecated, a log line each (empty: nothing)."""
    if not v['task.max_torque_rate']:
        return []
    taken = ('taken as limits.max_torque_rate (one torque rate limit, in every mode)'
             if not v['limits.max_torque_rate'] else
             'ignored: limits.max_torque_rate is set, and is the one torque rate limit')
    return [f'task.max_torque_rate is deprecated, use limits.max_torque_rate: '
            f'{list(v["task.max_torque_rate"])} {taken}']


def limit_settings(v):
    """Return the limits layer's settings the values describe (see ``limits.LimitLayer``)."""
    return dict(position_margin=v['limits.position_margin'],
                position_gain=v['limits.position_gain'],
                velocity_scale=v['limits.velocity_scale'],
                response_time=v['limits.response_time'],
                max_torque_rate=torque_rate(v), frame=v['limits.frame'],
                workspace=v['limits.workspace'],
                tool_speed=v['limits.tool_speed'])


def commanded_joints(model, v):
    """Return the joints a controller of ``model`` commands with values ``v``, in order."""
    return v['joints'] or default_joints(model)[0]


def controller(model, v):
    """
    Build a Controller for ``model`` and values ``v`` (ValueError: they do not fit it).

    ``effort_limits.<joint>`` and ``default_positions.<joint>`` count where ``v`` has them.
    """
    joints = commanded_joints(model, v)
    limits = {j: v[f'effort_limits.{j}'] for j in model.joint_names
              if f'effort_limits.{j}' in v
              and v[f'effort_limits.{j}'] != model.effort_limits[model.index(j)]}
    defaults = {j: v[f'default_positions.{j}'] for j in model.joint_names
                if f'default_positions.{j}' in v}
    try:
        return Controller(model, joints=joints, mode=v['mode'], kp=v['kp'], kd=v['kd'],
                          hardware_compensates_gravity=v['hardware_compensates_gravity'],
                          effort_limits=limits, default_positions=defaults, payload=payload(v),
                          armature=v['armature'] or None,
                          friction_compensation=v['friction_compensation'],
                          damping=v['damping'] or None, friction=v['friction'] or None,
                          friction_velocity_epsilon=v['friction_velocity_epsilon'],
                          torque_offset=v['torque_offset'] or None, task=task(v),
                          limits=limit_settings(v), force=force_settings(v))
    except KeyError as e:
        raise ValueError(str(e).strip('"')) from None


def observer(ctrl, v, old=None):
    """
    Return (observer or None, its ObserverSettings) for ``ctrl``'s model and values ``v``.

    ``old``: the running observer, kept (with its state) when the model and gains are the same;
    its gap interval (``state_timeout``) is the new one's. ValueError when the values do not fit
    the model.
    """
    s = check_observer(ctrl.model.n, v['observer.enabled'], v['observer.gain'],
                       v['collision.thresholds'], v['effort_gain'], v['state_timeout'])
    if not s.enabled:
        return None, s
    if old is not None and old.runs(ctrl.model, s):
        old.max_interval = s.max_interval
        return old, s                           # the same model and gains: keep its state
    # across a gap longer than state_timeout (the torques changed unseen) r is held
    return MomentumObserver(ctrl.model, s.gain, max_interval=s.max_interval), s
