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

    robot-dynamics info [--urdf PATH] [--xacro-args NAME:=VALUE ...]
    robot-dynamics fk [--urdf PATH] [--frame LINK] [--q Q..] [--degrees] [--jacobian]
                      [--reference {world,local,local_world_aligned}]
    robot-dynamics launch {simulation,feedforward}[.launch.py] [name:=value ...] [--show-args]
    robot-dynamics torques [--urdf PATH] [--start Q..] [--goal Q..] [--degrees]
                           [--duration T] [--samples N] [--rows R] [--plot OUT.png]
    robot-dynamics check [--urdf PATH] TRAJ [--sample-period S] [--payload LINK KG]
                         [--plot OUT.png]
    robot-dynamics excite --urdf PATH -o excite.yaml [--duration T] [--harmonics L] ...
    robot-dynamics identify --urdf PATH BAG [BAG ...] -o corrected.urdf [--payload LINK] ...

``info`` prints what the model of a description is: each movable joint in model order (type,
parent -> child link, axis, limits, damping, friction), the frames (every link, with the joint
that moves it), the masses, the ros2_control effort joints and what loading warned about.

``fk`` prints where a frame is at a configuration: its position (m), rotation matrix and
quaternion (x, y, z, w), in the root link's frame; with --jacobian also its 6 x n Jacobian (rows
v_x v_y v_z w_x w_y w_z, columns the joints in model order) in --reference.

``launch`` starts the nodes a launch file of this package starts, with the same arguments,
parameters and remappings, where ROS 2's launch system is not installed (the ros-* wheels from PyPI
do not have it); Ctrl-C ends them all. With ROS 2 installed, ``ros2 launch robot_dynamics_ros
FILE`` does the same.

``torques``
evaluates RNEA along the quintic rest-to-rest trajectory from --start to --goal and prints the
joint torques and their split into inertial M(q) qdd, Coriolis/centrifugal c(q, qd) and gravity
g(q) parts, then each joint's peak torque against its URDF effort limit. Without --urdf it uses the
2R arm of the lecture notes that the package ships (q1 90 -> 0 deg, q2 -180 -> 90 deg).

``check`` asks whether the arm manages a trajectory: RNEA along it as the controller samples it
(linear, cubic or quintic segments), each joint's peak |torque| and |velocity| against its URDF
limits, and k*, the smallest uniform time stretch that fits them (k* <= 1: feasible, 1/k* the
headroom; inf: gravity alone exceeds a limit). TRAJ is a YAML or JSON file with ``joint_names``
and ``points`` (``positions``, optional ``velocities`` and ``accelerations``, ``time_from_start``
in seconds or as ROS's {sec, nanosec}), optionally ``start`` ({positions, velocities} of those
joints; default: the first point, at rest) and ``rest_positions`` ({joint: position} for the
joints not in the trajectory; default zero clamped into the limits). Exit status 1 when
infeasible, 2 on bad input.
"""
import argparse
import sys
import textwrap

import numpy as np

from ..control import JointTrajectory, check_trajectory, payload_model
from ..control.trajectory import quintic
from ..dynamics import RobotModel, bias_torques, example_urdf, gravity_torques, rnea

NOTES_2R = {'start': [90.0, -180.0], 'goal': [0.0, 90.0]}   # degrees


def torque_split(model, Q, QD, QDD):
    """(total, inertial, coriolis, gravity) torques along a sampled trajectory, each (K, n)."""
    total = rnea(model, Q, QD, QDD)
    gravity = gravity_torques(model, Q)
    bias = bias_torques(model, Q, QD)
    return total, total - bias, bias - gravity, gravity


def _description_arguments(parser):
    parser.add_argument('--urdf', help='URDF or .xacro file (default: the shipped 2R arm of the '
                                       'lecture notes)')
    parser.add_argument('--xacro-args', nargs='+', default=[], metavar='NAME:=VALUE',
                        help='arguments of a .xacro --urdf, as xacro takes them')


def _model(args):
    return RobotModel.from_urdf_file(args.urdf or example_urdf('planar_2r'), args.xacro_args)


def parser():
    """Return the argument parser of ``robot-dynamics`` (its --help and the CLI reference)."""
    ap = argparse.ArgumentParser(prog='robot-dynamics',
                                 description=__doc__.strip().split('\n\n')[0])
    sub = ap.add_subparsers(dest='command', required=True)
    t = sub.add_parser('torques', help='torques along a quintic trajectory and their split',
                       description=__doc__.strip().split('\n\n', 2)[2])
    _description_arguments(t)
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
    c = sub.add_parser('check', help='will the arm manage a trajectory (torque, velocity limits)',
                       description=[p for p in __doc__.split('\n\n')
                                    if p.startswith('``check``')][0])
    c.add_argument('trajectory', metavar='TRAJ', help='YAML or JSON trajectory file')
    _description_arguments(c)
    c.add_argument('--sample-period', type=float, default=1e-3,
                   help='seconds between samples, plus every waypoint (default 0.001)')
    c.add_argument('--payload', nargs=2, metavar=('LINK', 'KG'),
                   help='a point mass at the origin of LINK (kg)')
    c.add_argument('--plot', metavar='OUT.png',
                   help='write the torques against their limits, as given and scaled by k*')
    i = sub.add_parser('info', help='joints, limits, frames, masses, ros2_control order, load '
                                    'warnings')
    _description_arguments(i)
    f = sub.add_parser('fk', help='pose (and Jacobian) of a frame at a configuration',
                       description=[p for p in __doc__.split('\n\n')
                                    if p.startswith('``fk``')][0])
    _description_arguments(f)
    f.add_argument('--frame', help='a link (default: the last link of the model)')
    f.add_argument('--q', type=float, nargs='+', metavar='Q',
                   help='one value per movable joint in model order (rad or m; default zeros)')
    f.add_argument('--degrees', action='store_true', help='--q of revolute joints in degrees')
    f.add_argument('--jacobian', action='store_true', help='print the Jacobian too')
    f.add_argument('--reference', default='local_world_aligned',
                   choices=['world', 'local', 'local_world_aligned'],
                   help='the Jacobian\'s reference frame (default local_world_aligned: root '
                        'axes, at the frame\'s origin)')
    la = sub.add_parser('launch', help='start the nodes of a launch file without ROS\'s launch '
                                       'system', description=[
                                           p for p in __doc__.split('\n\n')
                                           if p.startswith('``launch``')][0])
    la.add_argument('file', metavar='FILE', help='simulation or feedforward (.launch.py)')
    la.add_argument('arguments', nargs='*', metavar='NAME:=VALUE', help='launch arguments')
    la.add_argument('-s', '--show-args', action='store_true',
                    help='list the launch arguments with their defaults')
    from .identify import add_parsers
    add_parsers(sub, _description_arguments)
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
    frames = [f'{link} ({model.joint_names[b] if b >= 0 else "fixed"})'
              for link, b in ((link, model.frame(link)[0]) for link in model.frames)]
    out += ['', 'frames, with the joint that moves each (fk --frame LINK):'] + _wrap_items(frames)
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
        model = _model(args)
    except ValueError as e:
        print(f'robot-dynamics: {e}', file=sys.stderr)
        return 1
    print(describe(model))
    return 0


def fk(args, parser):
    from ..dynamics import frame_jacobian, frame_placement
    from ..dynamics.frames import quaternion
    try:
        model = _model(args)
    except ValueError as e:
        print(f'robot-dynamics: {e}', file=sys.stderr)
        return 1
    frame = args.frame or model.frames[-1]
    if frame not in model.frames:
        parser.error(f'--frame {frame} is not a link of {model.name} (robot-dynamics info lists '
                     f'them)')
    q = np.zeros(model.n) if args.q is None else np.array(args.q)
    if q.shape != (model.n,) or not np.all(np.isfinite(q)):
        parser.error(f'--q needs {model.n} finite values, one per joint in model order '
                     f'{list(model.joint_names)}')
    if args.degrees:
        q = np.where(model.jtype == 0, np.radians(q), q)
    T = frame_placement(model, q, frame)
    fmt = {'float_kind': lambda x: f'{x: .6f}'}
    print(f'frame {frame} of {model.name} in {model.root_link} at q = '
          f'{np.array2string(q, precision=4, separator=", ")}')
    print(f'position (m): {np.array2string(T[:3, 3], formatter=fmt, separator=", ")}')
    print('rotation:\n' + np.array2string(T[:3, :3], formatter=fmt, separator=', '))
    print('quaternion (x, y, z, w): ' + ', '.join(f'{v:.6f}' for v in quaternion(T)))
    if args.jacobian:
        J = frame_jacobian(model, q, frame, args.reference)
        print(f'jacobian ({args.reference}; rows vx vy vz wx wy wz, columns '
              f'{list(model.joint_names)}):')
        print(np.array2string(J, formatter=fmt, separator=', ', max_line_width=WIDTH))
    return 0


def torques(args, parser):
    if not args.duration > 0 or not np.isfinite(args.duration):
        parser.error('--duration must be a positive number of seconds')
    if args.samples < 2:
        parser.error('--samples must be at least 2')
    try:
        model = _model(args)
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


def _seconds(value, where):
    if isinstance(value, dict):
        return float(value.get('sec', 0)) + 1e-9 * float(value.get('nanosec', 0))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise ValueError(f'{where}: time_from_start must be seconds or {{sec, nanosec}}, '
                     f'got {value!r}')


def load_trajectory(path, model):
    """
    Read a trajectory file into (JointTrajectory starting at 0, q_rest in model order).

    ValueError with the reason for a file that does not parse or does not fit the model.
    """
    import yaml       # reads JSON too
    try:
        with open(path, encoding='utf-8') as f:
            doc = yaml.safe_load(f)
    except OSError as e:
        raise ValueError(f'cannot read {path}: {e.strerror}') from None
    except yaml.YAMLError as e:
        raise ValueError(f'{path} is not YAML or JSON: {e}') from None
    if not isinstance(doc, dict) or 'joint_names' not in doc or 'points' not in doc:
        raise ValueError(f'{path}: needs joint_names and points')
    names = [str(j) for j in doc['joint_names']]
    unknown = [j for j in names if j not in model.joint_names]
    if unknown:
        raise ValueError(f'{path}: unknown joints {unknown} (the model has '
                         f'{list(model.joint_names)})')
    points = doc['points']
    if not isinstance(points, list) or not all(isinstance(p, dict) for p in points):
        raise ValueError(f'{path}: points must be a list of mappings')

    def column(key):
        have = [key in p and p[key] is not None and len(p[key]) > 0 for p in points]
        if not any(have):
            return None
        if not all(have):
            raise ValueError(f'{path}: some points have {key}, others not')
        return [p[key] for p in points]

    times = [_seconds(p.get('time_from_start'), f'{path} point {i}')
             for i, p in enumerate(points)]
    positions = column('positions')
    if positions is None:
        raise ValueError(f'{path}: every point needs positions')
    start = doc.get('start') or {}
    q0 = start.get('positions', positions[0])
    qd0 = start.get('velocities')
    traj = JointTrajectory(names, times, positions, column('velocities'),
                           column('accelerations'), start_time=0.0, q0=q0, qd0=qd0)
    lo, hi = model.position_limits[:, 0], model.position_limits[:, 1]
    q_rest = np.clip(np.zeros(model.n), lo, hi)
    for joint, value in (doc.get('rest_positions') or {}).items():
        if joint not in model.joint_names:
            raise ValueError(f'{path}: rest_positions names unknown joint {joint}')
        q_rest[model.index(joint)] = float(value)
    return traj, q_rest


def _check_table(result):
    """Per joint peaks against limits, in at most WIDTH columns."""
    head = (f'{"joint":<24} {"peak |tau|":>10} {"at [s]":>7} {"limit":>8} {"use":>5}   '
            f'{"peak |qd|":>9} {"at [s]":>7} {"limit":>7} {"use":>5}')
    lines = [head]

    def use(x, lim):
        return f'{100 * x / lim:4.0f}%' if np.isfinite(lim) else '  n/a'

    for j, name in enumerate(result.names):
        e, le = result.peak_effort[j], result.effort_limit[j]
        v, lv = result.peak_velocity[j], result.velocity_limit[j]
        mark = ' <' if name == result.limiting_joint else ''
        lines.append(f'{name[:24]:<24} {e:10.3f} {result.peak_effort_time[j]:7.3f} '
                     f'{_num(le):>8} {use(e, le)}   {v:9.3f} {result.peak_velocity_time[j]:7.3f} '
                     f'{_num(lv):>7} {use(v, lv)}{mark}')
    return '\n'.join(lines)


def plot_check(path, result, title=''):
    """Torques against their limits over time, as given and stretched by k* (when finite)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    n, k = len(result.names), result.min_time_scale
    fig, axes = plt.subplots(n, 1, figsize=(8, 2.0 * n + 0.8), sharex=True, squeeze=False)
    scaled = np.isfinite(k) and k > 0 and k != 1.0
    for j, ax in enumerate(axes[:, 0]):
        ax.plot(result.t, result.tau[:, j], 'k', lw=1.5, label='as given')
        if scaled:
            ax.plot(result.t * k, result.torques(k)[:, j], 'C0', lw=1.5,
                    label=f'stretched x{k:.3g}')
        lim = result.effort_limit[j]
        if np.isfinite(lim):
            for sign in (1, -1):
                ax.axhline(sign * lim, color='C3', ls='--', lw=1,
                           label='effort limit' if sign > 0 else None)
        ax.set_ylabel(f'{result.names[j]}\n[N m]')
        ax.grid(alpha=0.3)
    axes[0, 0].legend(loc='best', fontsize=8)
    axes[-1, 0].set_xlabel('t [s]')
    fig.suptitle(title or result.message(), fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def check(args, parser):
    if not (args.sample_period > 0 and np.isfinite(args.sample_period)):
        parser.error('--sample-period must be a positive number of seconds')
    try:
        model = _model(args)
        if args.payload:
            link, mass = args.payload[0], float(args.payload[1])
            model = payload_model(model, {'link': link, 'mass': mass})
        traj, q_rest = load_trajectory(args.trajectory, model)
        result = check_trajectory(model, traj, q_rest=q_rest, sample_period=args.sample_period)
    except ValueError as e:
        print(f'robot-dynamics check: {e}', file=sys.stderr)
        return 2
    print(_fit(f'# {model.name}: {len(result.t)} samples over {traj.times[-1]:.3f} s, '
               f'{traj.kind} segments; N m and rad/s (N, m/s prismatic)'))
    print(_check_table(result))
    print()
    print('\n'.join(textwrap.wrap(f'k* = {result.min_time_scale:.6g}: {result.message()}',
                                  WIDTH, subsequent_indent='  ')))
    if args.plot:
        try:
            plot_check(args.plot, result)
        except OSError as e:
            print(f'robot-dynamics: cannot write {args.plot}: {e.strerror}', file=sys.stderr)
            return 2
        print(f'plot: {args.plot}')
    return 0 if result.feasible else 1


def main(argv=None):
    ap = parser()
    args = ap.parse_args(argv)
    if args.command == 'torques':
        return torques(args, ap)
    if args.command == 'check':
        return check(args, ap)
    if args.command == 'info':
        return info(args)
    if args.command == 'fk':
        return fk(args, ap)
    if args.command in ('identify', 'excite'):
        from . import identify     # scipy, cvxpy and rosbags: imported by these commands only
        return getattr(identify, args.command)(args, _model)
    if args.command == 'launch':
        from .launcher import launch       # imports nothing of ROS before it is asked for
        return launch(args.file, args.arguments, args.show_args)
    return 2  # pragma: no cover - argparse requires a command


if __name__ == '__main__':
    sys.exit(main())
