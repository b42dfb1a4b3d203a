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
``robot-dynamics identify`` and ``robot-dynamics excite``: the model of the real arm.

    robot-dynamics excite --urdf NOMINAL.urdf [--duration 20] [--harmonics 5]
                          [--base-frequency 0.1] [--start Q ...] -o excite.yaml
    robot-dynamics identify --urdf NOMINAL.urdf BAG [BAG ...] [--topic T] [--effort-topic T]
                            [--effort-units torque|current] [--holdout BAG] [--payload LINK]
                            [--loaded BAG --load-mass KG --load-link LINK [--load-com X Y Z]]
                            [--effort-gain JOINT=K ...] [--accept-gains]
                            -o corrected.urdf
                            [--params-out params.yaml] [--report report.yaml]
                            [--plot identify.png]
    robot-dynamics identify --urdf NOMINAL.urdf --list-base-parameters

``excite`` writes a trajectory for the controller's ``~/joint_trajectory`` (the YAML that
``robot-dynamics check`` reads): a finite Fourier series per joint, at rest at its start and end,
optimised for the condition number of the base regressor within the position, velocity and
effort limits. ``identify`` fits the recorded torques: the base parameters by weighted least
squares, then physically consistent full parameters by a semidefinite program, and writes the
description with every identified ``<inertial>`` and ``<dynamics>`` replaced (everything else
kept), a params file for the nodes (armature, damping, friction, torque_offset and, from
currents, effort_gain), a report and a plot. With ``--payload LINK`` only a rigid payload on LINK
is identified. Exit status 2 on bad input, with no output file written.

The model of an effort: effort_gain * effort = RNEA(q, qd, qdd) (with the armature) + damping qd
+ friction tanh(qd / friction_velocity_epsilon) + torque_offset. The offset is a torque sensor's
bias, and with the Coulomb term a friction that differs with the direction of motion: friction +
torque_offset moving forwards, friction - torque_offset backwards (the report lists both).
``--effort-units current``: the efforts are motor currents (or any unit proportional to the
torque); each joint's effort_gain (torque per unit, gear included) is identified too. Their
scale is fixed by a recording of the arm carrying a known load (``--loaded``, ``--load-mass``,
``--load-link``; ``--load-com`` where known) when there is one: from the difference the load
makes; else by gains given (``--effort-gain``); else by the description's masses (off by as much
as they are). A gain the data cannot identify, or one GAIN_SPREAD times or more from the median
of the others, is named with the remedy, and nothing is written unless ``--accept-gains`` says to.
"""
import argparse
import os
import sys
import tempfile
import textwrap
import time
import xml.etree.ElementTree as ET

import numpy as np

from ..control.identification import (DEFAULT_CUTOFF, EFFORT_UNITS, GAIN_SPREAD,
                                      IdentificationError)
from ..dynamics import RobotModel, load_description
from ..dynamics.model import com_inertia
from ..dynamics.regressor import spatial_inertia

WIDTH = 100
EPSILON = 0.01          # rad/s: the controller's default friction_velocity_epsilon
# Waypoints per second of an excitation: with positions, velocities and accelerations the
# controller's quintic segments follow the Fourier series to ~1e-6 rad (test_identify_cli), and
# the file stays small enough for one `ros2 topic pub` argument (20 s, 7 joints: ~85 kB).
WAYPOINT_RATE = 10.0
# --help shows the module's text as written (its usage lines one per line), without the markup
HELP = __doc__.strip().replace('``', '').replace('GAIN_SPREAD', f'{GAIN_SPREAD:g}')


def add_parsers(sub, description_arguments):
    """Register the ``identify`` and ``excite`` subcommands."""
    i = sub.add_parser('identify', help='identify inertias, friction and armature (or a payload) '
                                        'from recorded bags', description=HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    description_arguments(i)
    i.add_argument('bags', nargs='*', metavar='BAG',
                   help='ROS 2 bags (directory, .mcap or .db3) or CSV files')
    i.add_argument('--topic', default='/joint_states', help='JointState topic (default '
                                                            '/joint_states)')
    i.add_argument('--effort-topic', help='JointState topic of the commanded efforts when the '
                                          'joint states carry none (the controller\'s ~/torques)')
    i.add_argument('--effort-units', choices=EFFORT_UNITS, default='torque',
                   help='what the efforts are: torque (N m, N; checked against the description) '
                        'or current (or any unit proportional to torque: each joint\'s gain is '
                        'identified; with --payload it comes from --params-in\'s effort_gain)')
    i.add_argument('--holdout', metavar='BAG', help='a recording kept out of the fit to validate')
    i.add_argument('--loaded', metavar='BAG', action='append',
                   help='a recording of the arm carrying a known load (--load-mass): with '
                        '--effort-units current, the difference the load makes fixes the '
                        'gains (repeat for more)')
    i.add_argument('--load-mass', type=float, metavar='KG', help='the known load\'s mass')
    i.add_argument('--load-link', metavar='LINK', help='the link the known load is fixed to')
    i.add_argument('--load-com', type=float, nargs=3, metavar=('X', 'Y', 'Z'),
                   help='the known load\'s centre of mass in the link\'s frame (m), where '
                        'known (else identified with its inertia)')
    i.add_argument('--effort-gain', action='append', metavar='JOINT=K',
                   help='a joint\'s torque per effort unit, known (a datasheet\'s torque '
                        'constant times the gear ratio): kept as given (repeat for more)')
    i.add_argument('--accept-gains', action='store_true',
                   help='write the files even when a gain is not identifiable from the data or '
                        'absurd against the others (it is named either way)')
    i.add_argument('--payload', metavar='LINK', help='identify only a rigid payload on LINK')
    i.add_argument('-o', '--output', metavar='corrected.urdf', help='the corrected description')
    i.add_argument('--params-out', metavar='params.yaml', help='params file for the nodes')
    i.add_argument('--params-in', metavar='params.yaml',
                   help='a params file of an earlier identification: its armature, damping, '
                        'friction and friction_velocity_epsilon complete the description (with '
                        '--payload: the arm as identified; its values are carried into '
                        '--params-out)')
    i.add_argument('--report', metavar='report.yaml', help='RMS errors, condition, samples')
    i.add_argument('--plot', metavar='identify.png', help='measured against predicted torques')
    i.add_argument('--cutoff', type=float, default=DEFAULT_CUTOFF,
                   help=f'low-pass cut-off (Hz) of positions, velocities and efforts (default '
                        f'{DEFAULT_CUTOFF:g})')
    i.add_argument('--friction-velocity-epsilon', type=float,
                   help=f'velocity scale of the smooth Coulomb sign tanh(qd / eps), as the '
                        f'controller\'s parameter (default: --params-in\'s, else {EPSILON:g})')
    i.add_argument('--prior-weight', type=float, default=1e-4,
                   help='pull towards the description\'s values where the data say nothing '
                        '(default 1e-4)')
    i.add_argument('--list-base-parameters', action='store_true',
                   help='print the identifiable combinations of the parameters and exit')
    e = sub.add_parser('excite', help='an exciting trajectory for identification',
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    description_arguments(e)
    e.add_argument('--duration', type=float, default=20.0,
                   help='seconds, a whole number of periods (default 20)')
    e.add_argument('--harmonics', type=int, default=5, help='per joint (default 5)')
    e.add_argument('--base-frequency', type=float, default=0.1, help='Hz (default 0.1)')
    e.add_argument('--start', type=float, nargs='+', metavar='Q',
                   help='start and end configuration in model order (default: mid-range)')
    e.add_argument('--seed', type=int, default=0, help='of the initial guess (default 0)')
    e.add_argument('-o', '--output', metavar='excite.yaml', required=True)


def _say(text):
    print(text, flush=True)


def _fail(text):
    print('\n'.join(textwrap.wrap(f'robot-dynamics identify: {text}', WIDTH,
                                  subsequent_indent='  ')), file=sys.stderr)
    return 2


# ---- excite -------------------------------------------------------------------------------------

def excite(args, load_model):
    from ..control.excitation import optimise
    from ..control.identification import base_parameters
    from ..control import check_trajectory
    from ..control.trajectory import JointTrajectory
    try:
        model = load_model(args)
        periods = args.duration * args.base_frequency
        if not (args.duration > 0 and abs(periods - round(periods)) < 1e-9 and periods >= 1):
            raise ValueError(f'--duration {args.duration:g} s must be a whole number of periods '
                             f'of --base-frequency {args.base_frequency:g} Hz')
        t0 = time.monotonic()
        _say(f'excite: base parameters of {model.name} ({model.n} joints) ...')
        base = base_parameters(model)
        _say(f'excite: optimising {model.n} x {args.harmonics} harmonics for the condition '
             f'number of {base.count} base parameters ...')
        ex = optimise(model, base, harmonics=args.harmonics, base_frequency=args.base_frequency,
                      start=args.start, epsilon=EPSILON, seed=args.seed)
    except (ValueError, OSError) as e:
        print(f'robot-dynamics excite: {e}', file=sys.stderr)
        return 2
    t, q, qd, qdd = ex.trajectory.waypoints(args.duration, WAYPOINT_RATE)
    traj = JointTrajectory(list(model.joint_names), t, q, qd, qdd, start_time=0.0, q0=q[0])
    result = check_trajectory(model, traj, q_rest=q[0], sample_period=1e-3)

    def stamp(s):
        return {'sec': int(s), 'nanosec': int(round((s - int(s)) * 1e9))}

    doc = {'joint_names': list(model.joint_names),
           'points': [{'positions': a.tolist(), 'velocities': b.tolist(),
                       'accelerations': c.tolist(), 'time_from_start': stamp(s)}
                      for s, a, b, c in zip(t, q, qd, qdd)]}
    if not _write_all({args.output: _yaml(doc)}, 'excite'):
        return 2
    _say(f'excite: condition number {ex.condition:.4g} ({base.count} base parameters, columns '
         f'scaled to unit norm), {ex.iterations} iterations, {time.monotonic() - t0:.1f} s')
    verdict = 'feasible' if result.feasible else 'NOT feasible'
    _say(f'excite: k* = {result.min_time_scale:.3g} ({verdict}'
         f' within the URDF limits, without friction); {len(t)} points over {args.duration:g} s '
         f'-> {args.output}')
    return 0


# ---- identify -----------------------------------------------------------------------------------

def _yaml(doc):
    import yaml
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=WIDTH)


def _write_all(files, who):
    """Write every file or none (each to a temporary name first); False after an error."""
    done = []
    try:
        for path, text in files.items():
            folder = os.path.dirname(os.path.abspath(path))
            fd, tmp = tempfile.mkstemp(dir=folder, prefix='.rdr-')
            with os.fdopen(fd, 'w', encoding='utf-8') as f:
                f.write(text)
            done.append((tmp, path))
        for tmp, path in done:
            os.replace(tmp, path)
    except OSError as e:
        for tmp, _ in done:
            if os.path.exists(tmp):
                os.remove(tmp)
        print(f'robot-dynamics {who}: cannot write: {e}', file=sys.stderr)
        return False
    return True


def list_base_parameters(model):
    from ..control.identification import base_parameters
    base = base_parameters(model)
    lines = [f'# {model.name}: {base.count} base parameters of {len(base.names)}',
             '# (10 inertial per body; damping, friction, armature, offset per joint)',
             '# each is the first parameter plus the others times their coefficient']
    for k in range(base.count):
        lines += textwrap.wrap(f'b{k + 1:<3d} = {base.combination(k)}', WIDTH,
                               subsequent_indent=' ' * 7)
    gone = base.unidentifiable
    if gone:
        lines += textwrap.wrap('# change no torque (not identifiable, kept from the description):'
                               f' {", ".join(gone)}', WIDTH, subsequent_indent='#   ')
    print('\n'.join(lines))
    return 0


def corrected_description(xml, model, identified):
    """
    Return the description ``xml`` with the identified model's inertias and joint friction.

    Each body's parameters go to the ``<inertial>`` of the child link of its joint (the body's
    frame); links merged into that body through fixed joints lose theirs (their mass is in it
    now). Every movable joint gets ``<dynamics damping friction>``. Everything else is kept.
    """
    robot = ET.fromstring(xml, parser=ET.XMLParser(target=ET.TreeBuilder(insert_comments=True)))
    links = {e.get('name'): e for e in robot.findall('link')}
    joints = {e.get('name'): e for e in robot.findall('joint')}
    merged = {}
    for link in model.link_names:
        body = model.link_frame(link)[0]
        if body >= 0:
            merged.setdefault(body, []).append(link)
    for i, (_, _, child) in enumerate(model.urdf_joints):
        m, c, Ic = com_inertia(identified.I[i])
        for link in merged.get(i, []):
            for old in links[link].findall('inertial'):
                links[link].remove(old)
        inertial = ET.SubElement(links[child], 'inertial')
        ET.SubElement(inertial, 'origin', xyz=' '.join(repr(float(x)) for x in c), rpy='0 0 0')
        ET.SubElement(inertial, 'mass', value=repr(m))
        ET.SubElement(inertial, 'inertia', **{k: repr(float(Ic[a, b])) for k, (a, b) in (
            ('ixx', (0, 0)), ('ixy', (0, 1)), ('ixz', (0, 2)), ('iyy', (1, 1)), ('iyz', (1, 2)),
            ('izz', (2, 2)))})
        joint = joints[model.joint_names[i]]
        for old in joint.findall('dynamics'):
            joint.remove(old)
        ET.SubElement(joint, 'dynamics', damping=repr(float(identified.damping[i])),
                      friction=repr(float(identified.friction[i])))
    ET.indent(robot, space='  ')
    return '<?xml version="1.0"?>\n' + ET.tostring(robot, encoding='unicode') + '\n'


PARAMS_IN = ('armature', 'damping', 'friction', 'torque_offset', 'effort_gain',
             'friction_velocity_epsilon', 'friction_compensation')
SIGNED = ('torque_offset',)             # any sign; the others >= 0 (effort_gain > 0)


def read_params(path, model):
    """
    Return the identification values of a params file (``/**`` or a node's ros__parameters).

    Only those of ``PARAMS_IN``; the per-joint ones with one value per model joint.
    """
    import yaml
    try:
        with open(path, encoding='utf-8') as f:
            doc = yaml.safe_load(f)
    except OSError as e:
        raise IdentificationError(f'--params-in: cannot read {path}: {e.strerror}') from None
    except yaml.YAMLError as e:
        raise IdentificationError(f'--params-in: {path} is not YAML: {e}') from None
    found = {}
    for node in (doc or {}).values() if isinstance(doc, dict) else ():
        values = node.get('ros__parameters') if isinstance(node, dict) else None
        for key in PARAMS_IN:
            if isinstance(values, dict) and key in values:
                found[key] = values[key]
    for key in ('armature', 'damping', 'friction', 'torque_offset', 'effort_gain'):
        if key in found:
            v = np.asarray(found[key], dtype=float).ravel()
            if v.size == 1:
                v = np.full(model.n, v[0])
            sign = (np.all(v > 0) if key == 'effort_gain' else
                    True if key in SIGNED else np.all(v >= 0))
            if v.shape != (model.n,) or not np.all(np.isfinite(v)) or not sign:
                what = ('> 0' if key == 'effort_gain' else 'of any sign' if key in SIGNED
                        else '>= 0')
                raise IdentificationError(f'--params-in: {key} needs {model.n} finite values '
                                          f'{what} (one per joint of {model.name})')
            found[key] = v
    if not found:
        raise IdentificationError(f'--params-in: {path} sets none of {", ".join(PARAMS_IN)}')
    return found


def _params_file(model, identified, epsilon, payload=None, carried=None, gains=None):
    values = {k: (v.tolist() if isinstance(v, np.ndarray) else v)
              for k, v in (carried or {}).items()}
    if payload is None:
        values.update(armature=identified.armature.tolist(), damping=identified.damping.tolist(),
                      friction=identified.friction.tolist(),
                      torque_offset=identified.torque_offset.tolist(), friction_compensation=1.0,
                      friction_velocity_epsilon=epsilon)
        if gains is not None:
            values['effort_gain'] = gains.tolist()
    else:
        values.update({'payload.link': payload.link, 'payload.mass': payload.mass,
                       'payload.com': payload.com.tolist(),
                       'payload.inertia': payload.inertia.tolist()})
    head = ('# robot-dynamics identify: for feedforward_node (params_file:=); joints in model '
            f'order:\n# {", ".join(model.joint_names)}\n')
    return head + _yaml({'/**': {'ros__parameters': values}})


def _table(model, rows):
    """Per joint RMS errors: rows is a list of (title, values per joint)."""
    head = f'{"joint":<22s}' + ''.join(f'{t:>13s}' for t, _ in rows)
    lines = [head[:WIDTH]]
    for j, name in enumerate(model.joint_names):
        lines.append((f'{name[:21]:<22s}' + ''.join(f'{v[j]:13.4g}' for _, v in rows))[:WIDTH])
    return '\n'.join(lines)


def plot(path, model, t, measured, nominal, identified, title):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    n = model.n
    fig, axes = plt.subplots(n, 1, figsize=(9, 1.9 * n + 0.8), sharex=True, squeeze=False)
    for j, ax in enumerate(axes[:, 0]):
        ax.plot(t, measured[:, j], 'k', lw=1.6, label='measured')
        ax.plot(t, nominal[:, j], lw=1.0, label='URDF model')
        ax.plot(t, identified[:, j], '--', lw=1.0, label='identified model')
        ax.set_ylabel(f'{model.joint_names[j]}\n[N m]', fontsize=8)
        ax.grid(alpha=0.3)
    axes[0, 0].legend(loc='best', fontsize=8)
    axes[-1, 0].set_xlabel('sample time [s]')
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100, format='png')
    plt.close(fig)


class _Stage:
    """Print a progress line for a stage and, when it took over a second, its duration."""

    def __init__(self, text):
        self.text = text

    def __enter__(self):
        self.t0 = time.monotonic()
        _say(f'identify: {self.text} ...')

    def __exit__(self, *exc):
        dt = time.monotonic() - self.t0
        if exc[0] is None and dt > 1.0:
            _say(f'identify:   {dt:.1f} s')


def _load(paths, model, args, rate=None):
    from ..control import identification as idf
    from .recordings import read
    out, notes = [], []
    for path in paths:
        rec = read(path, args.topic, args.effort_topic)
        notes += [f'{path}: {note}' for note in rec.notes]
        s = idf.prepare(model, rec, cutoff=args.cutoff, rate=rate)
        rate = s.rate
        out.append(s)
    return idf.concatenate(out), notes


def identify(args, load_model):
    from ..control import identification as idf
    from ..dynamics.regressor import with_parameters
    try:
        if not args.cutoff > 0:
            raise IdentificationError('--cutoff must be > 0 Hz')
        model = load_model(args)
        carried = read_params(args.params_in, model) if args.params_in else {}
        if 'armature' in carried:
            model = model.with_armature(carried['armature'])
        model = model._replace(**{k: carried[k] for k in ('damping', 'friction', 'torque_offset')
                                  if k in carried})
        gains = carried.get('effort_gain')
        if gains is not None and args.effort_units != 'current':
            raise IdentificationError('--params-in gives effort_gain (efforts in motor current): '
                                      'say --effort-units current')
        if args.payload and args.effort_units == 'current' and gains is None:
            raise IdentificationError('--effort-units current with --payload needs each joint\'s '
                                      'effort_gain from --params-in: identify the arm first')
        eps = (args.friction_velocity_epsilon if args.friction_velocity_epsilon is not None
               else carried.get('friction_velocity_epsilon', EPSILON))
        if not eps > 0:
            raise IdentificationError('--friction-velocity-epsilon must be > 0')
        if args.list_base_parameters:
            return list_base_parameters(model)
        if not args.bags:
            raise IdentificationError('give at least one BAG (or --list-base-parameters)')
        if not (args.output or args.params_out or args.report or args.plot):
            raise IdentificationError('nothing to write: give -o, --params-out, --report or '
                                      '--plot')
        given = _given_gains(args.effort_gain, model)
        load = _known_load(args, model)
        if (given or load) and args.effort_units != 'current':
            raise IdentificationError('--effort-gain and --loaded fix the gains of efforts in '
                                      'motor current: say --effort-units current')
        if (given or load) and (args.payload or gains is not None):
            raise IdentificationError('--effort-gain and --loaded identify the gains: not with '
                                      '--payload or --params-in\'s effort_gain')
        if args.payload and args.payload not in model.link_names:
            raise IdentificationError(f'--payload: link "{args.payload}" is not in '
                                      f'{model.name}')
        t0 = time.monotonic()
        with _Stage(f'reading {len(args.bags)} recording(s) of {model.name}'):
            train, notes = _load(args.bags, model, args)
            hold = None
            if args.holdout:
                hold, more = _load([args.holdout], model, args, rate=train.rate)
                notes += more
            loaded = None
            if load is not None:
                loaded, more = _load(args.loaded, model, args, rate=train.rate)
                notes += more
        _say(f'identify: {train.used} samples at {train.rate / train.step:.0f} Hz from '
             f'{train.read} read ({train.rate:.0f} Hz), cut-off {train.cutoff:g} Hz')
        if gains is not None:           # currents of known gains: torques from here on
            _scale_efforts(gains, train, hold)
        idf.check_efforts(model, train, eps, 'torque' if gains is not None else
                          args.effort_units)
        if loaded is not None:
            idf.check_efforts(model, loaded, eps, args.effort_units)
        report = {'model': model.name, 'cutoff_hz': train.cutoff,
                  'samples': {'read': train.read, 'used': train.used,
                              'dropped': dict(train.dropped), 'notes': notes}}
        if args.payload:
            with _Stage(f'a payload on {args.payload} (semidefinite program)'):
                pl = idf.payload(model, train, args.payload, eps)
            identified = model.with_payload(pl.link, pl.mass, pl.com, pl.inertia)
            report['payload'] = {'link': pl.link, 'mass': pl.mass, 'com': pl.com.tolist(),
                                 'inertia': pl.inertia.tolist(),
                                 'pseudo_inertia_min_eigenvalue': pl.min_eigenvalue}
        else:
            pl = None
            with _Stage('base parameters'):
                base = idf.base_parameters(model)
            if args.effort_units == 'current' and gains is None:
                found, flagged = _effort_gains(model, train, loaded, load, given, base, eps,
                                               args)
                gains = found.gains
                _scale_efforts(gains, train, hold)
                report['effort_gains'] = {
                    j: {'gain': float(found.gains[i]),
                        'relative_std': float(found.relative_std[i]),
                        'source': found.source[i]} for i, j in enumerate(model.joint_names)}
                report['effort_gains_flagged'] = dict(flagged)
            with _Stage(f'weighted least squares on {base.count} base parameters'):
                ls = idf.least_squares(model, train, base, eps)
            steps = idf.offset_steps(model, train, ls.residual)
            if steps:
                raise IdentificationError(
                    'the efforts\' offset changed during a recording (a torque sensor '
                    're-zeroed?): ' + '; '.join(f'joint {j} by {d:+.3g} N m at t = {t:.1f} s'
                                                for j, d, t in steps)
                    + '. One offset per joint cannot fit it: record again, or cut the recording '
                      'there and identify from one part')
            with _Stage(f'physically consistent parameters of {model.n} bodies (semidefinite '
                        f'program)'):
                cons = idf.consistent(model, train, ls, eps, args.prior_weight)
            identified = with_parameters(model, cons.pi)
            report['condition_number'] = ls.condition
            report['base_parameters'] = [
                {'combination': base.combination(k), 'value': float(ls.beta[k]),
                 'relative_std': float(ls.relative_std[k])} for k in range(base.count)]
            report['consistent_fit_vs_least_squares'] = cons.fit / max(cons.fit_least_squares,
                                                                       1e-300)
            report['pseudo_inertia_min_eigenvalue'] = dict(zip(
                [child for _, _, child in model.urdf_joints] or model.joint_names,
                cons.min_eigenvalue.tolist()))
            report['joints'] = _joint_report(identified, gains)
        rms = {}
        series = {}
        for what, s in (('training', train), ('holdout', hold)):
            if s is None:
                continue
            measured, nominal = idf.predict(model, s, eps)
            _, ident = idf.predict(identified, s, eps)
            rms[what] = (idf.rms(measured), idf.rms(measured - nominal),
                         idf.rms(measured - ident))
            series[what] = (s, measured, nominal, ident)
        report['rms'] = {what: {j: {'torque': float(a[k]), 'urdf_error': float(b[k]),
                                    'identified_error': float(c[k])}
                                for k, j in enumerate(model.joint_names)}
                         for what, (a, b, c) in rms.items()}
        files = {}
        if args.output:
            if args.payload:
                xml = with_payload_link(load_description(args.urdf, args.xacro_args), pl)
            else:
                xml = corrected_description(load_description(args.urdf, args.xacro_args),
                                            model, identified)
            check = RobotModel.from_urdf(xml)          # it loads, and it is what we identified
            if not np.allclose(check.I, identified.I, rtol=1e-9, atol=1e-12):
                raise IdentificationError('the corrected description does not reproduce the '
                                          'identified inertias (a bug: please report it)')
            files[args.output] = xml
        if args.params_out:
            files[args.params_out] = _params_file(model, identified, eps, pl,
                                                  carried if pl is not None else None,
                                                  gains if pl is None else None)
        if args.report:
            files[args.report] = _yaml(report)
    except (IdentificationError, ValueError, KeyError, OSError) as e:
        return _fail(str(e).strip('"\''))
    if args.plot:
        what = 'holdout' if 'holdout' in series else 'training'
        s, measured, nominal, ident = series[what]
        t = np.arange(len(measured)) * s.step / s.rate
        try:
            with _Stage(f'plot of the {what} data'):
                import io
                buf = io.BytesIO()
                plot(buf, model, t, measured, nominal, ident, f'{model.name}: {what} data')
        except OSError as e:
            return _fail(f'cannot draw the plot: {e}')
    if not _write_all(files, 'identify'):
        return 2
    if args.plot:
        try:
            with open(args.plot, 'wb') as f:
                f.write(buf.getvalue())
        except OSError as e:
            return _fail(f'cannot write {args.plot}: {e.strerror}')
    _print_summary(model, report, rms, args, time.monotonic() - t0)
    return 0


def _given_gains(items, model):
    """Return {joint index: gain} of ``--effort-gain JOINT=K`` arguments."""
    out = {}
    for item in items or ():
        name, _, value = item.partition('=')
        if name not in model.joint_names:
            raise IdentificationError(f'--effort-gain {item}: no joint "{name}" in {model.name} '
                                      f'(its joints: {", ".join(model.joint_names)})')
        try:
            k = float(value)
        except ValueError:
            k = float('nan')
        if not (np.isfinite(k) and k > 0):
            raise IdentificationError(f'--effort-gain {item}: the gain must be a number > 0 '
                                      f'(torque per effort unit)')
        out[model.joint_names.index(name)] = k
    return out


def _known_load(args, model):
    """Return the ``--loaded`` recording's KnownLoad, or None; refuse incomplete or bad ones."""
    from ..control import identification as idf
    parts = (args.load_mass, args.load_link, args.load_com)
    if not args.loaded:
        if any(p is not None for p in parts):
            raise IdentificationError('--load-mass, --load-link and --load-com describe the load '
                                      'of a --loaded recording: give it')
        return None
    if args.load_mass is None or args.load_link is None:
        raise IdentificationError('--loaded needs the load\'s --load-mass (kg) and --load-link')
    load = idf.KnownLoad(args.load_link, float(args.load_mass),
                         None if args.load_com is None else np.array(args.load_com))
    idf.check_load(model, load)
    return load


def _effort_gains(model, train, loaded, load, given, base, eps, args):
    """
    Identify the gains, print them with their uncertainty and source; refuse doubtful ones.

    Return (gains, the doubtful ones). Doubtful (``idf.judge_gains``): IdentificationError naming
    each with the remedy, unless ``--accept-gains``.
    """
    from ..control import identification as idf
    if loaded is not None:
        with _Stage(f'the load on {load.link} as the description\'s masses see it'):
            seen = idf.load_seen(model, train, loaded, load, base, eps)
        _say(f'identify:   {seen:.4g} kg of the {load.mass:g} kg given')
    with _Stage(f'torque per effort unit of {model.n} joints'):
        if loaded is not None or given:
            found = idf.effort_gains_known(model, train, base, eps, loaded, load, given)
        else:
            found = idf.effort_gains(model, train, base, eps)
    idf.check_gains(model, found)
    _say('\nTorque per effort unit (gear included), its relative standard deviation, and what '
         'fixed its scale:')
    for i, j in enumerate(model.joint_names):
        _say(f'  {j[:21]:<22s}{found.gains[i]:11.5g} +-{100 * found.relative_std[i]:6.2g} %   '
             f'{found.source[i]}')
    if found.load is not None:
        m, c, _ = com_inertia(spatial_inertia(found.load))
        _say(f'  (the known load: {m:.4g} kg at [{", ".join(f"{x:.4g}" for x in c)}] m on '
             f'{load.link})')
    elif idf.DESCRIPTION in found.source:
        _say('  Their scale is the description\'s masses: if those are off by some per cent, '
             'so is every gain (a recording with a known load fixes it: --loaded)')
    _say('')
    flagged = idf.judge_gains(model, found)
    if flagged:
        lines = '; '.join(f'joint {j}: {why}' for j, why in flagged)
        if not args.accept_gains:
            raise IdentificationError(f'{lines}. To fix it: {idf.REMEDY}; or write the files '
                                      f'with these gains anyway: --accept-gains. Nothing '
                                      f'written')
        _say(f'identify: accepted (--accept-gains) though {lines}')
    return found, flagged


def _scale_efforts(gains, *samples):
    """Turn the samples' efforts into torques: each joint's times its gain (torque per unit)."""
    for s in samples:
        if s is not None:
            s.tau = s.tau * gains


def _joint_report(model, gains):
    """Per joint: friction (and what it is in each direction), armature, offset, gain."""
    out = {}
    for i, j in enumerate(model.joint_names):
        fc, fo = float(model.friction[i]), float(model.torque_offset[i])
        out[j] = {'damping': float(model.damping[i]), 'friction': fc, 'torque_offset': fo,
                  'friction_forward': fc + fo, 'friction_backward': fc - fo,
                  'armature': float(model.armature[i])}
        if gains is not None:
            out[j]['effort_gain'] = float(gains[i])
    return out


def with_payload_link(xml, payload):
    """
    Return the description with the payload as a link of its own, fixed to its link.

    ``<link name="<link>_payload">`` with the payload's inertial (CoM and inertia in the link's
    axes), and ``<joint name="<link>_payload_joint" type="fixed">``: remove both when the payload
    comes off. Everything else is kept.
    """
    robot = ET.fromstring(xml, parser=ET.XMLParser(target=ET.TreeBuilder(insert_comments=True)))
    names = {e.get('name') for e in robot.findall('link')}
    name = f'{payload.link}_payload'
    while name in names:
        name += '_'
    link = ET.SubElement(robot, 'link', name=name)
    inertial = ET.SubElement(link, 'inertial')
    ET.SubElement(inertial, 'origin', xyz=' '.join(repr(float(x)) for x in payload.com),
                  rpy='0 0 0')
    ET.SubElement(inertial, 'mass', value=repr(payload.mass))
    ixx, ixy, ixz, iyy, iyz, izz = (repr(float(x)) for x in payload.inertia)
    ET.SubElement(inertial, 'inertia', ixx=ixx, ixy=ixy, ixz=ixz, iyy=iyy, iyz=iyz, izz=izz)
    joint = ET.SubElement(robot, 'joint', name=f'{name}_joint', type='fixed')
    ET.SubElement(joint, 'parent', link=payload.link)
    ET.SubElement(joint, 'child', link=name)
    ET.SubElement(joint, 'origin', xyz='0 0 0', rpy='0 0 0')
    ET.indent(robot, space='  ')
    return '<?xml version="1.0"?>\n' + ET.tostring(robot, encoding='unicode') + '\n'


def _print_summary(model, report, rms, args, seconds):
    if 'condition_number' in report:
        _say(f'identify: condition number {report["condition_number"]:.4g}; consistent fit '
             f'{report["consistent_fit_vs_least_squares"]:.3f} x the least-squares residual')
    if 'payload' in report:
        p = report['payload']
        _say(f'identify: payload on {p["link"]}: {p["mass"]:.4g} kg at '
             f'[{", ".join(f"{x:.4g}" for x in p["com"])}] m')
    if 'joints' in report:
        rows = report['joints']
        cols = [('damping', 'damping'), ('friction', 'friction'), ('offset', 'torque_offset'),
                ('fc forward', 'friction_forward'), ('fc backward', 'friction_backward')]
        if any('effort_gain' in r for r in rows.values()):
            cols.append(('effort gain', 'effort_gain'))
        _say('\nJoint friction, offset' + (' and torque per effort unit' if len(cols) > 5
                                           else '') + ' (N m, N):')
        _say(_table(model, [(title, [rows[j][key] for j in model.joint_names])
                            for title, key in cols]))
    for what, (tau, nominal, ident) in rms.items():
        _say(f'\nRMS torque error on the {what} data (N m, N):')
        _say(_table(model, [('torque RMS', tau), ('URDF model', nominal),
                            ('identified', ident)]))
    written = [p for p in (args.output, args.params_out, args.report, args.plot) if p]
    _say(f'\nidentify: {seconds:.1f} s; wrote:')
    for path in written:
        _say(f'  {path}')
