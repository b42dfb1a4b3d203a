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
``robot-dynamics``: inverse dynamics of a URDF arm from the command line.

    robot-dynamics info [--urdf PATH]
    robot-dynamics torques [--urdf PATH] [--start Q..] [--goal Q..] [--degrees]
                           [--duration T] [--samples N] [--rows R] [--plot OUT.png]

``info`` prints what the model of a description is: each movable joint in model order (type,
parent -> child link, axis, limits, damping, friction), the masses, the ros2_control effort
joints and what loading warned about.

``torques``
evaluates RNEA along the quintic rest-to-rest trajectory from --start to --goal and prints the
joint torques and their split into inertial M(q) qdd, Coriolis/centrifugal c(q, qd) and gravity
g(q) parts, then each joint's peak torque against its URDF effort limit. Without --urdf it uses the
2R arm of the lecture notes that the package ships (q1 90 -> 0 deg, q2 -180 -> 90 deg).
"""
import argparse
import sys
import textwrap

import numpy as np

from ..dynamics import RobotModel, bias_torques, example_urdf, gravity_torques, rnea
from ..control.trajectory import quintic

NOTES_2R = {'start': [90.0, -180.0], 'goal': [0.0, 90.0]}   # degrees


def torque_split(model, Q, QD, QDD):
    """(total, inertial, coriolis, gravity) torques along a sampled trajectory, each (K, n)."""
    total = rnea(model, Q, QD, QDD)
    gravity = gravity_torques(model, Q)
    bias = bias_torques(model, Q, QD)
    return total, total - bias, bias - gravity, gravity


def _parser():
    ap = argparse.ArgumentParser(prog='robot-dynamics',
                                 description=__doc__.strip().split('\n\n')[0])
    sub = ap.add_subparsers(dest='command', required=True)
    t = sub.add_parser('torques', help='torques along a quintic trajectory and their split',
                       description=__doc__.strip().split('\n\n', 2)[2])
    t.add_argument('--urdf', help='URDF file (default: the shipped 2R arm of the lecture notes)')
    t.add_argument('--start', type=float, nargs='+', metavar='Q',
                   help='start configuration, one value per movable joint in model order '
                        '(rad or m; default: the notes\' start for the 2R arm, else zeros)')
    t.add_argument('--goal', type=float, nargs='+', metavar='Q',
                   help='goal configuration (default: the notes\' goal for the 2R arm, else start '
                        '+ 0.5 rad / 0.05 m within the limits)')
    t.add_argument('--degrees', action='store_true',
                   help='--start/--goal of revolute joints are in degrees')
    t.add_argument('--duration', type=float, default=2.0, help='seconds (default 2)')
    t.add_argument('--samples', type=int, default=201, help='trajectory samples (default 201)')
    t.add_argument('--rows', type=int, default=11, help='table rows to print (default 11)')
    t.add_argument('--plot', metavar='OUT.png', help='write the torque split as a figure')
    i = sub.add_parser('info', help='joints, limits, masses, ros2_control order, load warnings')
    i.add_argument('--urdf', help='URDF file (default: the shipped 2R arm of the lecture notes)')
    return ap


def _configs(args, model, parser):
    n = model.n
    revolute = model.jtype == 0
    shipped = args.urdf is None
    start = args.start
    goal = args.goal
    if shipped and start is None and goal is None:
        start, goal, degrees = NOTES_2R['start'], NOTES_2R['goal'], True
    else:
        degrees = args.degrees
    for name, v in (('--start', start), ('--goal', goal)):
        if v is not None and len(v) != n:
            parser.error(f'{name} needs {n} values (joints {", ".join(model.joint_names)}), '
                         f'got {len(v)}')
    lo, hi = model.position_limits[:, 0], model.position_limits[:, 1]
    q0 = np.zeros(n) if start is None else np.array(start, dtype=float)
    if degrees and start is not None:
        q0 = np.where(revolute, np.radians(q0), q0)
    if start is None:
        q0 = np.clip(q0, lo, hi)
    if goal is None:
        qf = np.clip(q0 + np.where(revolute, 0.5, 0.05), lo, hi)
    else:
        qf = np.array(goal, dtype=float)
        if degrees:
            qf = np.where(revolute, np.radians(qf), qf)
    if not (np.all(np.isfinite(q0)) and np.all(np.isfinite(qf))):
        parser.error('--start and --goal must be finite')
    return q0, qf


def _table(model, t, Q, parts, rows):
    total, inertial, coriolis, gravity = parts
    idx = np.unique(np.linspace(0, len(t) - 1, max(2, rows)).round().astype(int))
    names = model.joint_names
    lines = [f'# {model.name}: {model.n} joints; torques in N m (N for prismatic joints)',
             '# tau = inertial M(q)qdd + coriolis c(q,qd) + gravity g(q)']
    header = f'{"t [s]":>7}'
    for name in names:
        header += f' | {name[:22]:^40}'
    lines.append(header)
    sub = f'{"":>7}' + ''.join(f' | {"q":>7} {"tau":>7} {"inert":>7} {"coriol":>7} {"grav":>7}'
                               for _ in names)
    lines.append(sub)
    for k in idx:
        row = f'{t[k]:7.3f}'
        for j in range(model.n):
            row += (f' | {Q[k, j]:7.3f} {total[k, j]:7.2f} {inertial[k, j]:7.2f} '
                    f'{coriolis[k, j]:7.2f} {gravity[k, j]:7.2f}')
        lines.append(row)
    lines.append('')
    lines.append(f'{"joint":<24} {"peak |tau|":>10} {"limit":>9} {"use":>6}')
    for j, name in enumerate(names):
        peak = np.abs(total[:, j]).max()
        lim = model.effort_limits[j]
        use = f'{100 * peak / lim:5.0f}%' if np.isfinite(lim) else '   n/a'
        flag = '  OVER LIMIT' if np.isfinite(lim) and peak > lim else ''
        lines.append(f'{name:<24} {peak:10.2f} {lim:9.1f} {use}{flag}')
    return '\n'.join(lines)


def plot_split(path, model, t, parts, title=''):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    total, inertial, coriolis, gravity = parts
    n = model.n
    fig, axes = plt.subplots(n, 1, figsize=(8, 2.2 * n + 0.8), sharex=True, squeeze=False)
    for j, ax in enumerate(axes[:, 0]):
        ax.plot(t, total[:, j], 'k', lw=2, label='total')
        ax.plot(t, inertial[:, j], label='inertial M(q)q̈')
        ax.plot(t, coriolis[:, j], label='Coriolis/centrifugal c(q,q̇)')
        ax.plot(t, gravity[:, j], label='gravity g(q)')
        ax.set_ylabel(f'{model.joint_names[j]}\n[N m]')
        ax.grid(alpha=0.3)
    axes[0, 0].legend(loc='best', fontsize=8)
    axes[-1, 0].set_xlabel('t [s]')
    fig.suptitle(title or f'{model.name}: inverse dynamics along a quintic trajectory')
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


WIDTH = 100


def _num(x, unit=''):
    if not np.isfinite(x):
        return 'none'
    return f'{x:.4g}{unit}'


def describe(model):
    """Return the ``info`` text of a model, in at most WIDTH columns."""
    out = [f'robot "{model.name}": {model.n} movable joints, root link "{model.root_link}", '
           f'total moving mass {model.total_mass:.4g} kg',
           '', f'{"#":>3} {"joint":<26} {"type":<11} parent -> child link']
    for i, name in enumerate(model.joint_names):
        jt, parent, child = (model.urdf_joints[i] if model.urdf_joints else
                             ('prismatic' if model.jtype[i] else 'revolute', '?', '?'))
        prismatic = model.jtype[i] == 1
        pos, vel = ('m', 'm/s') if prismatic else ('rad', 'rad/s')
        eff, damp = ('N', 'N s/m') if prismatic else ('N m', 'N m s/rad')
        lo, hi = model.position_limits[i]
        ax = ', '.join(f'{a:.3g}' for a in model.axis[i])
        out.append(_fit(f'{i:>3} {name:<26} {jt:<11} {parent} -> {child}'))
        limits = (f'[{lo:.4g}, {hi:.4g}] {pos}' if np.isfinite(lo) or np.isfinite(hi)
                  else 'unlimited')
        out.append(_fit(f'{"":>4}axis ({ax})  position {limits}  velocity '
                        f'{_num(model.velocity_limits[i], " " + vel)}  effort '
                        f'{_num(model.effort_limits[i], " " + eff)}'))
        if model.damping[i] or model.friction[i]:
            out.append(f'{"":>4}damping {model.damping[i]:.4g} {damp}  friction '
                       f'{model.friction[i]:.4g} {eff}')
    masses = [f'{link} {m:.4g}' for link, m in model.link_masses.items()]
    out += ['', 'link masses (kg):'] + _wrap_items(masses)
    rc = model.ros2_control
    out.append('')
    if rc.effort_joints:
        out += ['ros2_control effort command joints (the command order):'] + _wrap_items(
            rc.effort_joints)
    else:
        out.append('ros2_control: ' + ('no effort command interface' if rc.joints else
                                       'no <ros2_control> block') +
                   ' (command order: every movable joint in model order)')
    out.append('')
    if model.warnings:
        out.append('warnings of loading:')
        for w in model.warnings:
            out += textwrap.wrap(w, WIDTH, initial_indent='  - ', subsequent_indent='    ')
    else:
        out.append('warnings of loading: none')
    return '\n'.join(out)


def _wrap_items(items, indent='  '):
    """Comma-separated items in lines of at most WIDTH columns, never splitting an item."""
    lines, line = [], indent
    for k, item in enumerate(items):
        piece = item + (',' if k < len(items) - 1 else '')
        if len(line) + len(piece) + 1 > WIDTH and line.strip():
            lines.append(line.rstrip())
            line = indent
        line += piece + ' '
    return lines + [line.rstrip()] if line.strip() else lines


def _fit(line):
    return line if len(line) <= WIDTH else line[:WIDTH - 3] + '...'


def info(args):
    try:
        model = RobotModel.from_urdf_file(args.urdf or example_urdf('planar_2r'))
    except ValueError as e:
        print(f'robot-dynamics: {e}', file=sys.stderr)
        return 1
    print(describe(model))
    return 0


def torques(args, parser):
    if not args.duration > 0 or not np.isfinite(args.duration):
        parser.error('--duration must be a positive number of seconds')
    if args.samples < 2:
        parser.error('--samples must be at least 2')
    try:
        model = RobotModel.from_urdf_file(args.urdf or example_urdf('planar_2r'))
    except ValueError as e:
        print(f'robot-dynamics: {e}', file=sys.stderr)
        return 1
    q0, qf = _configs(args, model, parser)
    t = np.linspace(0.0, args.duration, args.samples)
    Q, QD, QDD = quintic(q0, qf, args.duration, t)
    parts = torque_split(model, Q, QD, QDD)
    print(_table(model, t, Q, parts, args.rows))
    if args.plot:
        try:
            plot_split(args.plot, model, t, parts)
        except OSError as e:
            print(f'robot-dynamics: cannot write {args.plot}: {e.strerror}', file=sys.stderr)
            return 1
        print(f'\nplot: {args.plot}')
    return 0


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == 'torques':
        return torques(args, parser)
    if args.command == 'info':
        return info(args)
    return 2  # pragma: no cover - argparse requires a command


if __name__ == '__main__':
    sys.exit(main())
