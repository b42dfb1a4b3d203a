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
Identification: base parameters, least squares, the consistent fit and the payload, on real arms.

The data are the inverse dynamics of a "true" arm (identification_data.true_arm: masses, centres
of mass, inertias changed, friction, armature and a payload added) along Fourier trajectories,
through the same filtering as a recording.
"""
import numpy as np
import pytest

from robot_dynamics_ros.control import identification as idf
from robot_dynamics_ros.control.excitation import FourierTrajectory
from robot_dynamics_ros.dynamics import RobotModel
from robot_dynamics_ros.dynamics.regressor import parameters, regressor, with_parameters

from conftest import robot_urdf
from identification_data import EPSILON, recording, true_arm

pytestmark = [pytest.mark.offline, pytest.mark.any_distro]    # see conftest: PART, ANY_DISTRO

NOISE = (1e-5, 1e-3, 0.01)      # position rad, velocity rad/s, effort share of its RMS


def fourier(model, seed, harmonics=5, amplitude=0.5):
    """Return a random Fourier trajectory around mid-range, at rest at its start."""
    rng = np.random.default_rng(seed)
    lo, hi = model.position_limits[:, 0], model.position_limits[:, 1]
    bounded = np.isfinite(lo) & np.isfinite(hi)
    start = np.where(bounded, 0.5 * (np.where(bounded, lo, 0.0) + np.where(bounded, hi, 0.0)), 0.0)
    free = rng.uniform(-amplitude, amplitude, size=(model.n, 2 * (harmonics - 1)))
    return FourierTrajectory.from_free(model.joint_names, 0.1, free, start, harmonics)


@pytest.fixture(scope='module', params=['ur5', 'kinova'])
def arm(request):
    nominal = RobotModel.from_urdf(robot_urdf(request.param))
    return request.param, nominal, true_arm(nominal), idf.base_parameters(nominal)


def test_base_parameters_reproduce_the_torques(arm):
    name, nominal, true, base = arm
    assert 0 < base.count < 14 * nominal.n
    q, qd, qdd = idf.random_states(nominal, 50, np.random.default_rng(4))
    Y = regressor(nominal, q, qd, qdd, EPSILON)
    for model in (nominal, true):
        pi = parameters(model)
        tau = Y @ pi
        err = np.abs(base.columns(Y) @ base.of(pi) - tau).max() / np.abs(tau).max()
        assert err < 1e-10, (name, err)
    # what changes no torque at all is named (the first body's mass on a fixed axis)
    assert f'{nominal.urdf_joints[0][2]}.m' in base.unidentifiable
    assert base.combination(0).startswith(base.names[base.independent[0]])


def fit(nominal, base, *recordings):
    samples = idf.concatenate([idf.prepare(nominal, r) for r in recordings])
    ls = idf.least_squares(nominal, samples, base, EPSILON)
    return samples, ls


def test_noise_free_data_give_the_true_base_parameters(arm):
    name, nominal, true, base = arm
    train = recording(true, fourier(nominal, 1), 20.0)
    samples, ls = fit(nominal, base, train)
    beta = base.of(parameters(true))
    err = np.abs(ls.beta - beta).max() / np.abs(beta).max()
    assert err < 1e-6, (name, err)
    cons = idf.consistent(nominal, samples, ls, EPSILON)
    identified = with_parameters(nominal, cons.pi)
    hold = idf.prepare(nominal, recording(true, fourier(nominal, 2, amplitude=0.4), 10.0))
    measured, predicted = idf.predict(identified, hold, EPSILON)
    assert np.all(idf.rms(measured - predicted) < 1e-3 * idf.rms(measured)), name
    assert cons.min_eigenvalue.min() > -1e-9
    # the offsets (and with them the friction in each direction) come back: exactly in beta
    # (above), within the consistent fit's trade in the full parameters (seen: 5 mN m)
    np.testing.assert_allclose(identified.torque_offset, true.torque_offset, atol=0.01)
    np.testing.assert_allclose(identified.friction, true.friction, atol=0.01)


def test_noisy_data_give_a_model_that_predicts_held_out_motion(arm):
    name, nominal, true, base = arm
    samples, ls = fit(nominal, base, recording(true, fourier(nominal, 3), 20.0, noise=NOISE))
    cons = idf.consistent(nominal, samples, ls, EPSILON)
    # physically consistent by construction, and fitting nearly as well as the free fit
    assert cons.min_eigenvalue.min() > -1e-9
    assert cons.fit <= 1.05 * cons.fit_least_squares, (cons.fit, cons.fit_least_squares)
    assert np.all(cons.pi[10 * nominal.n:13 * nominal.n] >= 0)      # offsets of any sign
    identified = with_parameters(nominal, cons.pi)
    hold = idf.prepare(nominal, recording(true, fourier(nominal, 4, amplitude=0.4), 10.0,
                                          noise=NOISE, seed=9))
    measured, predicted = idf.predict(identified, hold, EPSILON)
    _, urdf = idf.predict(nominal, hold, EPSILON)
    torque, error, before = idf.rms(measured), idf.rms(measured - predicted), \
        idf.rms(measured - urdf)
    assert np.all((error <= 0.05 * torque) | (error <= 0.2)), (name, error / torque)
    assert np.all(error * 5 <= before), (name, error, before)


def test_without_the_offset_the_fit_is_worse_where_the_arm_has_one(arm):
    """The offset column earns its keep: leaving it out costs every joint that has one."""
    name, nominal, true, base = arm
    samples, ls = fit(nominal, base, recording(true, fourier(nominal, 3), 20.0, noise=NOISE))
    independent = [base.names[i] for i in base.independent]
    # one per joint, each identifiable on its own
    offsets = [independent.index(f'{j}.offset') for j in nominal.joint_names]
    # within four standard deviations of the fit (shoulder_lift's offset is nearly one of its
    # gravity terms in this motion: 0.05 N m there, the others within 5 mN m)
    std = ls.relative_std[offsets] * np.abs(ls.beta[offsets])
    assert np.all(np.abs(ls.beta[offsets] - true.torque_offset) <= 4 * std + 1e-3), \
        (name, ls.beta[offsets] - true.torque_offset, std)
    Y, tau = idf.observation(nominal, samples, EPSILON)
    W = base.columns(Y)
    keep = [k for k in range(base.count) if k not in offsets]
    Wk = W[:, :, keep].reshape(-1, len(keep))
    beta = np.linalg.lstsq(Wk, tau.ravel(), rcond=None)[0]
    without = idf.rms(tau - (Wk @ beta).reshape(tau.shape))
    with_ = idf.rms(ls.residual)
    big = np.abs(true.torque_offset) > 0.3
    # (shoulder_lift's gravity terms take up part of its offset: 1.9x there, 3-30x elsewhere)
    assert np.all(without[big] > 1.5 * with_[big]), (name, without, with_)


@pytest.mark.parametrize('name', ['ur5', 'panda'])
def test_efforts_in_current_give_each_joints_gain(name):
    """A driver reporting current through gains k: the gains come back within 2 %."""
    nominal = RobotModel.from_urdf(robot_urdf(name))
    n = nominal.n
    rng = np.random.default_rng(11)
    true = nominal._replace(damping=rng.uniform(0.1, 0.5, n), friction=rng.uniform(0.5, 1.5, n),
                            torque_offset=rng.uniform(-0.5, 0.5, n))
    k = rng.uniform(5.0, 50.0, n)               # N m per A, gear included
    rec = recording(true, fourier(nominal, 1, amplitude=0.8), 30.0, noise=NOISE)
    rec.effort = rec.effort / k
    samples = idf.prepare(nominal, rec)
    with pytest.raises(idf.IdentificationError,
                       match='not torques in N m.*--effort-units current'):
        idf.check_efforts(nominal, samples, EPSILON, 'torque')
    idf.check_efforts(nominal, samples, EPSILON, 'current')
    gains = idf.effort_gains(nominal, samples, idf.base_parameters(nominal), EPSILON)
    idf.check_gains(nominal, gains)
    assert np.all(np.abs(gains.gains / k - 1) < 0.02), (name, gains.gains / k - 1)
    # a joint whose current has the other sign is named
    flipped = idf.Gains(gains.gains * np.r_[1.0, -1.0, np.ones(n - 2)], gains.relative_std,
                        gains.from_description)
    with pytest.raises(idf.IdentificationError, match=f'joint {nominal.joint_names[1]}: the '
                                                      f'torque per effort unit comes out -'):
        idf.check_gains(nominal, flipped)


def test_a_gain_the_motion_cannot_tell_rests_on_the_description():
    """The last joint of kinova moves only its own link about its axis: friction or a gain."""
    nominal = RobotModel.from_urdf(robot_urdf('kinova'))
    n = nominal.n
    rng = np.random.default_rng(0)
    true = nominal._replace(friction=rng.uniform(0.5, 1.5, n))
    k = rng.uniform(5.0, 50.0, n)
    rec = recording(true, fourier(nominal, 1, amplitude=0.8), 30.0, noise=NOISE)
    rec.effort = rec.effort / k
    samples = idf.prepare(nominal, rec)
    gains = idf.effort_gains(nominal, samples, idf.base_parameters(nominal), EPSILON)
    assert list(gains.from_description) == [False] * (n - 1) + [True], gains.relative_std
    # the description is this arm's here: its inertia gives the right gain, within the noise
    # of that joint's effort (its torque is mostly friction: a few % here; the standard error
    # takes the filtered residual as white, which it is not: seen 3.8 of them)
    error = np.abs(gains.gains / k - 1)
    assert np.all(error[:-1] < 0.02) and error[-1] < 5 * gains.relative_std[-1], \
        (error, gains.relative_std)


def test_an_offset_that_changes_mid_recording_is_found():
    nominal = RobotModel.from_urdf(robot_urdf('ur5'))
    true = true_arm(nominal)
    rec = recording(true, fourier(nominal, 3), 20.0, noise=NOISE)
    base = idf.base_parameters(nominal)
    samples, ls = fit(nominal, base, rec)
    assert idf.offset_steps(nominal, samples, ls.residual) == []
    rec.effort[rec.t >= 112.0, 1] += 0.5          # shoulder_lift's sensor re-zeroed at 12 s
    samples, ls = fit(nominal, base, rec)
    (joint, step, t), = idf.offset_steps(nominal, samples, ls.residual)
    assert joint == 'shoulder_lift_joint' and abs(step - 0.5) < 0.1 and abs(t - 12.0) < 0.5


@pytest.mark.parametrize('what', ['zero', 'constant'])
def test_efforts_that_never_change_are_refused_naming_the_joint(what):
    nominal = RobotModel.from_urdf(robot_urdf('ur5'))
    rec = recording(nominal, fourier(nominal, 7), 5.0)
    if what == 'zero':
        rec.effort[:] = 0.0
    else:
        rec.effort[:, 4] = 1.5
    with pytest.raises(idf.IdentificationError, match=f'the effort of joint.*{what} throughout'):
        idf.check_efforts(nominal, idf.prepare(nominal, rec), EPSILON)


def test_too_little_excitation_names_what_is_not_excited():
    nominal = RobotModel.from_urdf(robot_urdf('ur5'))
    base = idf.base_parameters(nominal)
    traj = fourier(nominal, 5)
    traj.a[1:] = 0.0            # only the first joint moves
    traj.b[1:] = 0.0
    samples = idf.prepare(nominal, recording(nominal, traj, 20.0))
    with pytest.raises(idf.IdentificationError, match='too little excitation.*not excited: '):
        idf.least_squares(nominal, samples, base, EPSILON)


def test_payload_is_found_with_the_rest_of_the_arm_as_described():
    nominal = RobotModel.from_urdf(robot_urdf('ur5'))
    link = 'tool0'
    inertia = (0.01, 0.001, 0.0, 0.012, 0.0, 0.006)
    loaded = nominal.with_payload(link, 2.5, (0.02, -0.01, 0.08), inertia)
    for noise, tol in ((None, 1e-4), (NOISE, 0.02)):
        samples = idf.prepare(nominal, recording(loaded, fourier(nominal, 6), 20.0, noise=noise))
        p = idf.payload(nominal, samples, link, EPSILON)
        assert abs(p.mass - 2.5) < tol * 2.5, (noise, p.mass)
        np.testing.assert_allclose(p.com, [0.02, -0.01, 0.08], atol=tol * 0.1 + 1e-6)
        assert p.min_eigenvalue > -1e-9
    with pytest.raises(idf.IdentificationError, match='fixed to the base'):
        idf.payload(nominal, samples, 'base_link', EPSILON)


@pytest.mark.parametrize('problem, match', [
    ('nan', 'effort of joint elbow_joint is not finite at t = 1.000 s'),
    ('gap', 'a gap of 0.50. s'),
    ('short', 'too short to filter'),
    ('joints', r"joints \['wrist_3_joint'\] of the model are not in the recording"),
    ('backwards', 'stamps go back in time'),
])
def test_bad_recordings_are_refused_with_the_reason(problem, match):
    nominal = RobotModel.from_urdf(robot_urdf('ur5'))
    rec = recording(nominal, fourier(nominal, 7), 5.0)
    if problem == 'nan':
        rec.effort[1000, 2] = np.nan
    elif problem == 'gap':
        keep = (rec.t < 102.0) | (rec.t >= 102.5)
        rec = idf.Recording(rec.names, rec.t[keep], rec.position[keep], rec.velocity[keep],
                            rec.effort[keep])
    elif problem == 'short':
        rec = idf.Recording(rec.names, rec.t[:300], rec.position[:300], rec.velocity[:300],
                            rec.effort[:300])
    elif problem == 'joints':
        rec = idf.Recording(rec.names[:-1], rec.t, rec.position[:, :-1], rec.velocity[:, :-1],
                            rec.effort[:, :-1])
    elif problem == 'backwards':
        rec.t[2000] = rec.t[1998]
    with pytest.raises(idf.IdentificationError, match=match):
        idf.prepare(nominal, rec)


def test_gains_far_from_the_others_or_uncertain_are_named():
    """The issue's real arm: 7-12 N m/A on four joints, 2.3 and 0.015 on the last two."""
    nominal = RobotModel.from_urdf(robot_urdf('ur5'))
    gains = idf.Gains(np.array([9.0, 12.0, 7.0, 11.0, 2.3, 0.015]),
                      np.array([0.001, 0.001, 0.001, 0.002, 0.003, 0.004]), np.zeros(6, bool))
    flagged = dict(idf.judge_gains(nominal, gains))
    assert set(flagged) == {'wrist_2_joint', 'wrist_3_joint'}, flagged
    assert 'times the median' in flagged['wrist_2_joint'], flagged
    # uncertain: named whatever its value
    gains.relative_std[0] = 0.02
    assert 'not identifiable' in dict(idf.judge_gains(nominal, gains))['shoulder_pan_joint']
    # a gain the user gave is not judged
    gains.source[5] = idf.GIVEN
    assert 'wrist_3_joint' not in dict(idf.judge_gains(nominal, gains))
