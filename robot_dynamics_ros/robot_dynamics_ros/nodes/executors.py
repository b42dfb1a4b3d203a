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

"""How both nodes run: the hot input on a thread of its own, executors, clean shutdown, main()."""
from contextlib import contextmanager, ExitStack
import faulthandler
import gc
import os
import signal
import sys
import threading

import rclpy
from rclpy._rclpy_pybind11 import RCLError, WaitSet
from rclpy.exceptions import InvalidHandle, ParameterException
from rclpy.executors import (ExternalShutdownException, MultiThreadedExecutor,
                             SingleThreadedExecutor)
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.signals import uninstall_signal_handlers
from rclpy.subscription import Subscription
from rosgraph_msgs.msg import Clock

from ..dynamics.kernels import compile_in_background, load_cached
from .parameters import help_requested
from .teardown import exit_watchdog


# The history a state stream's publisher keeps (joint_states, ~/torques, ~/external_torques,
# ~/current_pose, ~/external_wrench): a reliable reader that stalls (a bag recorder or a plot on a
# loaded machine) gets what it missed as long as it is at most this many messages behind: a
# second at 1 kHz. With the usual 10 such a reader lost 0.06-1.35 s of a 1 kHz recording beside
# one busy core. Readers that keep up, and best-effort ones (the controller's joint_states), are
# not affected; effort commands keep 10 (a late command is of no use).
STREAM_DEPTH = 1000


class BackgroundKernels:
    """
    Kernels a node needs on its hot path later: loaded from numba's cache, else compiled elsewhere.

    Compiling them in the node's process would hold up its loop (3.5 s on a fresh install; on
    another thread the GIL stalls it up to 0.27 s at a time): a child process compiles them into
    numba's cache while the node runs without them (``compile_in_background``), and ``ready``
    is called (on another thread) once they are loaded here. ``what`` names them in the logs,
    ``until`` says what waits for them.
    """

    def __init__(self, logger, names, what, until, ready):
        self.logger, self.names, self.what = logger, names, what
        self.until, self.ready = until, ready
        self.loaded, self.child = False, None

    def need(self):
        """Return whether they are loaded; if not, start compiling them (once)."""
        if not self.loaded and self.child is None:
            if not load_cached(self.names):
                self.loaded = True
            else:
                self.child = compile_in_background(self.names, self._compiled)
                self.logger.info(f'{self.what}: its kernel is not in numba\'s cache (a first '
                                 f'start after an install): compiling it in a separate '
                                 f'process; {self.until} start when it is ready')
        return self.loaded

    def _compiled(self, seconds, error):
        self.loaded = True
        if error:
            self.logger.warning(f'{self.what}: compiling its kernel in a separate process failed '
                                f'({error}); compiled here instead, {seconds:.1f} s after it was '
                                f'needed')
        else:
            self.logger.info(f'{self.what}: kernel ready {seconds:.1f} s after it was needed; '
                             f'{self.until} from the next joint_states on')
        self.ready()

    def stop(self):
        """Abandon a compilation under way (at shutdown)."""
        if self.child is not None and self.child.poll() is None:
            self.child.kill()


def seconds(time_msg):
    """Return a builtin_interfaces Time or Duration (a stamp, a time_from_start) in seconds."""
    return time_msg.sec + 1e-9 * time_msg.nanosec


class TurnClock:
    """
    A node's ROS time read at most once per turn of its loop.

    The time a command is computed at and the stamp of what it publishes must be one reading:
    with simulated time /clock is taken by another callback, and a second reading can be a
    newer clock (seen: a desired state computed at one /clock, stamped with the next).
    ``reset()`` starts a turn and returns the callable the loop reads the time (s) from.
    """

    def __init__(self, node):
        self.clock = node.get_clock()
        self.now = None

    def reset(self):
        self.now = None
        return self.seconds

    def _read(self):
        if self.now is None:
            self.now = self.clock.now()
        return self.now

    def seconds(self):
        return self._read().nanoseconds * 1e-9

    def stamp(self):
        return self._read().to_msg()


def side_node(node, suffix):
    """
    Create a node ``<node>_<suffix>`` beside ``node``, for callbacks apart from ``node``'s.

    No parameter services, no rosout; ``spin`` runs it on an executor of its own, in a thread.
    Its topics and services take names as ``node`` resolves them (remappings included).
    """
    return rclpy.create_node(f'{node.get_name()}_{suffix}', namespace=node.get_namespace(),
                             context=node.context, use_global_arguments=False,
                             start_parameter_services=False, enable_rosout=False)


class LoopThread:
    """
    A control loop's input subscriptions, taken in a thread of their own through one wait set.

    rclpy's executors rebuild a wait set from every entity of their nodes, walk them in Python
    and wrap each message in a task: on a node answering each message of a 1 kHz stream that is
    about 0.1 ms of CPU per message here (an echo node at 1 kHz: 0.26 of a core spun by rclpy,
    0.15 by this loop). This loop keeps one wait set with the loop's subscriptions and a guard
    condition, takes one message of each ready subscription per wake-up (in the order they were
    subscribed, so a sensor reading subscribed before the joint states is handled first when both
    wait) and calls its callback in this thread, without a task.

    The subscriptions live on ``<node>_loop``, a node beside ``node`` in its namespace, without
    parameter services or rosout; topics resolve as ``node`` resolves them (remappings included).
    ``spin`` starts the thread and, once the context is down, wakes and joins it. A callback's
    exception ends the thread, as it would end an executor's spin.
    """

    POLL = 0.2          # s the wait lasts at most, then the context is looked at again

    def __init__(self, node):
        self.owner = node
        self.node = side_node(node, 'loop')
        self._subscriptions = []
        self._guard = self.node.create_guard_condition(lambda: None)
        self._clock = self._time_source = None

    def take_clock(self):
        """
        Take /clock in this thread: the owner's simulated time (use_sim_time) without its executor.

        rclpy's TimeSource takes /clock on the owner's executor, which walks every entity of the
        node at each wake-up: at a simulator's 1 kHz /clock that cost a controller 0.28 ms of
        CPU per message, about as much as its whole joint_states-to-command path. Here the
        TimeSource is detached from the owner (its subscription goes; use_sim_time set later
        still switches the owner's clocks, through the parameter callback it leaves) and its own
        callback is fed from this loop, before the states of the same wake-up (a simulator
        publishes /clock first). While use_sim_time is false /clock is not waited on.
        Call before the first ``subscribe``.
        """
        source = self.owner._time_source    # rclpy.node.Node's (Jazzy and Kilted alike)
        source.detach_node()
        self._time_source = source
        self._clock = self.subscribe(Clock, '/clock', source.clock_callback, QoSProfile(
            depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))     # TimeSource's QoS

    def subscribe(self, msg_type, topic, callback, qos):
        """Subscribe ``callback`` to ``topic`` as the owner node resolves it."""
        sub = self.node.create_subscription(msg_type, self.owner.resolve_topic_name(topic),
                                            callback, qos)
        self._subscriptions.append(sub)
        return sub

    def wake(self):
        """Make the wait return now (the loop then looks at the context)."""
        try:
            self._guard.trigger()
        except InvalidHandle:
            pass                        # destroyed already: nothing waits on it

    def run(self):
        """Take and handle messages until the context is down (the thread's body)."""
        context = self.node.context
        subs = list(self._subscriptions)
        try:
            with ExitStack() as held:
                # held for the whole loop, as an executor holds them for one wait: destroying
                # the node meanwhile is deferred until the loop has left
                for entity in (*subs, self._guard):
                    held.enter_context(entity.handle)
                held.enter_context(context.handle)
                wait_set = WaitSet(len(subs), 1, 0, 0, 0, 0, context.handle)
                timeout = int(self.POLL * 1e9)
                clock, source = self._clock, self._time_source
                while context.ok():
                    wait_set.clear_entities()
                    for sub in subs:
                        if sub is not clock or source.ros_time_is_active:
                            wait_set.add_subscription(sub.handle)
                    wait_set.add_guard_condition(self._guard.handle)
                    wait_set.wait(timeout)
                    ready = wait_set.get_ready_entities('subscription')
                    for sub in subs:
                        if sub.handle.pointer in ready:
                            taken = sub.handle.take_message(sub.msg_type, sub.raw)
                            if taken is not None:
                                sub.callback(taken[0])
        except (ExternalShutdownException, InvalidHandle):
            pass                        # shutdown (SIGINT, SIGTERM): spin's caller cleans up
        except RCLError:
            if context.ok():
                raise                   # a real error; else the context went down mid-wait

    def destroy(self):
        self.node.destroy_node()


# The longest the main executor waits before it looks at the context again (see spin).
SHUTDOWN_POLL = 0.2


LOOP_JOIN = 2.0         # s the control-loop thread has to leave its callback at shutdown


class _SingleThreadedExecutor(SingleThreadedExecutor):
    # rclpy's Executor.__del__ (7.1 and 9.1) reads _sigint_gc, which __init__ sets last: an
    # executor whose __init__ failed because a signal had shut the context down meanwhile
    # printed "Exception ignored in Executor.__del__ ... no attribute '_sigint_gc'" on Ctrl-C
    # during start-up (fresh-clone CI). The class attribute is what a half-built one then reads.
    _sigint_gc = None


class _MultiThreadedExecutor(MultiThreadedExecutor):
    _sigint_gc = None       # see _SingleThreadedExecutor


class DrainingExecutor(_SingleThreadedExecutor):
    """
    A single-threaded executor that takes every message a subscription holds at a wake-up.

    rclpy's executors build a wait set and a task for each message; a reader of 1 kHz streams
    that does not answer each message at once (a recorder, the demo, a test) spends most of its
    CPU there. Here one wake-up hands the callback every message that came since the last, in
    order (the subscription's depth must hold them). Services, clients and timers are served as
    rclpy serves them.
    """

    def _take_subscription(self, sub):
        taken = []
        try:
            with sub.handle:
                while True:
                    info = sub.handle.take_message(sub.msg_type, sub.raw)
                    if info is None:
                        break
                    taken.append(info)
        except InvalidHandle:
            return None                 # destroyed meanwhile, as rclpy's own take
        if not taken:
            return None
        with_info = sub._callback_type is not Subscription.CallbackType.MessageOnly

        async def _execute():
            for msg, info in taken:
                if with_info:
                    sub.callback(msg, info)
                else:
                    sub.callback(msg)
        return _execute


def executor_of(node):
    """
    Return the executor that spins ``node`` now, or None.

    Spin a node there, not with ``rclpy.spin_once(node)``: rclpy's ``add_node`` takes a node from
    the executor it was in, which then spins it no more. ``node.executor`` alone does not tell:
    ``rclpy.spin_once`` removes the node from the global executor after its turn and leaves
    ``node.executor`` naming it.
    """
    executor = node.executor
    return executor if executor is not None and node in executor.get_nodes() else None


def _executor(context, threads=1):
    """Return an executor on ``context``, or None when the context is down (or goes down)."""
    with _half_built_guard_conditions_quiet():
        try:
            return (_SingleThreadedExecutor(context=context) if threads == 1 else
                    _MultiThreadedExecutor(num_threads=threads, context=context))
        except RCLError:
            if context.ok():
                raise                   # a real error; else a signal came first
            return None


@contextmanager
def _half_built_guard_conditions_quiet():
    """
    Drop what the __del__ of a half-built rclpy SignalHandlerGuardCondition says, meanwhile.

    An executor's __init__ builds one after its own guard condition; a signal in between shuts
    the context down, its construction raises before it has a handle, and its __del__ (rclpy
    7.1 and 9.1) then reads that handle: "Exception ignored in SignalHandlerGuardCondition.__del__
    ... AttributeError: ... no attribute '_GuardCondition__gc'" (SIGTERM during start-up, a
    fresh-clone CI on Kilted). Other unraisable exceptions reach the hook as before.
    """
    previous = sys.unraisablehook

    def hook(unraisable):
        if not (isinstance(unraisable.exc_value, AttributeError)
                and '_GuardCondition__gc' in str(unraisable.exc_value)):
            previous(unraisable)
    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = previous


def spin(node):
    """
    Spin ``node`` until the context shuts down; its ``loop_thread`` (a LoopThread) if any.

    The loop thread and the side nodes' executors run in threads of their own; callbacks of
    these run concurrently and the node serialises them with its own lock.

    Not ``rclpy.spin``, which waits without a timeout and notices a signal's shutdown only
    through the one guard-condition trigger of rclpy's signal handler: should that wake-up be
    spent, nothing else wakes a node that no message, request or timer reaches (a plain
    rclpy.spin service server ignored SIGTERM in some test-suite runs; the cause was not pinned
    down). So the main executor never waits longer than SHUTDOWN_POLL before it looks at the
    context, and once the context is down the loop thread and side executors are woken
    explicitly.

    Teardown, in this order: the context down (already, after a signal), each thread woken and
    joined, then the executors shut down. rclpy's ``Executor.shutdown`` (7.1 and 9.1) does
    not wait for the callback in progress before it destroys the executor's guard condition,
    which that callback triggers when it ends: shutting the loop's executor down before its
    thread had left gave the InvalidHandle traceback seen on some Ctrl-Cs.
    """
    context = node.context
    main = _executor(context)
    if main is None:
        return                      # a signal during start-up: nothing to spin
    main.add_node(node)
    # the control loop in a thread of its own; side nodes, each on an executor of its own in
    # a thread: services that take seconds (``service_node``: two threads, so that a second
    # request is answered, refused, while the first runs) and actions (``action_node``: a
    # running goal's execute callback waits in one thread, a goal replacing it or a cancel
    # runs in another)
    sides = []
    loop = getattr(node, 'loop_thread', None)
    if loop is not None:
        thread = threading.Thread(target=loop.run, name='control loop', daemon=True)
        thread.start()
        sides.append(('control loop', loop, thread))
    for attr, what, threads in (('service_node', 'long services', 2),
                                ('action_node', 'actions', 4)):
        side = getattr(node, attr, None)
        executor = None if side is None else _executor(context, threads)
        if executor is None:
            continue                # no such node, or the context is down: teardown below
        executor.add_node(side)
        thread = threading.Thread(target=_spin_loop, args=(executor,), name=what, daemon=True)
        thread.start()
        sides.append((what, executor, thread))
    try:
        while context.ok():
            main.spin_once(timeout_sec=SHUTDOWN_POLL)
    except ExternalShutdownException:
        pass                        # the context went down during the wait
    finally:
        stop_signals_quiet()
        context.try_shutdown()      # (a no-op after a signal) ends the side executors' spin
        for what, executor, thread in sides:
            executor.wake()
            thread.join(timeout=LOOP_JOIN)
            if thread.is_alive():
                node.get_logger().warning(
                    f'the {what} thread was still in a callback {LOOP_JOIN} s after shutdown; '
                    'leaving it')
            elif executor is not loop:
                executor.shutdown(timeout_sec=0.0)
        main.shutdown(timeout_sec=0.0)


def _spin_loop(executor):
    """Spin a side node's executor until the context is down (its thread's body)."""
    try:
        executor.spin()
    except ExternalShutdownException:
        pass                        # shutdown (SIGINT, SIGTERM): spin's caller cleans up
    except RCLError:
        if executor.context.ok():
            raise                   # a real error; else the context went down mid-wait


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def stop_signals_quiet():
    """
    Ignore SIGINT and SIGTERM from here on, and end rclpy's signal-handling thread.

    Call before the teardown destroys anything. rclpy's handler (Jazzy and Kilted alike) hands
    each signal to a thread of its own, which triggers every executor's signal guard condition
    through a bare list of pointers and shuts the contexts down. A second Ctrl-C a few ms after
    the first (ros2 launch signals the process and its group) had that thread triggering an
    executor's guard condition while the teardown destroyed it, and freed the list: the
    simulator ended with a segmentation fault (status -11) in two fresh-clone CI runs, once on
    each distribution. Ignored, a signal no longer reaches that handler; uninstalling joins the
    thread, after whatever signal it was still handling. A teardown that hangs is still ended
    by the exit watchdog.
    """
    for stop in STOP_SIGNALS:
        signal.signal(stop, signal.SIG_IGN)
    uninstall_signal_handlers()


TEARDOWN_GRACE = 2.5    # s: the clean-up after a stop may take this long, then the process ends


def run_node(node_class, args=None, help_text=''):
    """
    rclpy.init, spin a node of ``node_class``, shut down.

    ``--help`` prints ``help_text`` and exits 0; a SystemExit raised by the node's constructor (an
    invalid parameter) is printed and gives exit status 1, as does an override of the wrong type
    (``-p lockstep:=maybe``: rclpy's exception as it declares the parameter, a traceback
    before); ROS arguments that do not parse (``-p name:=`` with no value) give status 2, with
    rcl's reason; Ctrl-C (SIGINT, possibly twice: launch signals the whole group) and SIGTERM end
    it cleanly with status 0.
    """
    if help_requested(args):
        print(help_text)
        return 0
    interrupted = []

    def on_stop(signum, frame):
        # SIGINT and SIGTERM alike, recorded and never raised. rclpy's own handler, installed by
        # init, runs first and chains to this one: it shuts the context down and wakes the
        # executors, so spin returns. An exception raised here would land wherever the main
        # thread is: inside rclpy's C++ conversion of a message it becomes a RuntimeError, inside
        # a ctypes callback of numba's LLVM it is printed and lost. A signal before rclpy's
        # handler is in place (during init) is seen after the node's construction.
        interrupted.append(signum)
    for stop in STOP_SIGNALS:
        signal.signal(stop, on_stop)
    # `kill -USR1 <pid>` prints every thread's stack (to stderr), whatever the process is doing:
    # what a stuck node was doing, without a debugger
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    # and a crash (SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL) prints them before the process
    # ends as it would have, with the same status: feedforward_node ended once with -11 on
    # SIGINT in fresh-clone CI (Kilted, robot-dynamics launch; 0 in 210 tries here), and
    # nothing said where
    faulthandler.enable(all_threads=True)
    program = os.path.basename(sys.argv[0]) or node_class.__name__
    try:
        rclpy.init(args=args)
    except RCLError as e:           # rcl's reason, without where in rcl's C source it was found
        reason = str(e).split(', at /')[0].removeprefix('failed to initialize rcl: ')
        print(f'[{program}] the ROS arguments do not parse: {reason}', file=sys.stderr)
        return 2
    node = None
    try:
        try:
            node = node_class()
        except ParameterException as e:     # -p name:=value of the wrong type for name
            raise SystemExit(f'[{program}] invalid parameter override: {e} (each parameter\'s '
                             f'type and default: --help)') from None
        except Exception:           # noqa: B902 - judged below
            # a stop during start-up shuts the context down under the constructor, whose next
            # rclpy call then raises (NotInitializedException creating the loop's side node;
            # ValueError creating the trajectory action's server: both seen in CI): a stop, not
            # an error. rclpy's C handler shuts the context down at once, while this module's
            # handler runs only once the main thread is back in Python: ``interrupted`` may
            # still be empty here (the ValueError's case)
            if not rclpy.ok():
                return 0
            raise
        if interrupted:
            return 0                # stopped during start-up: the clean-up below, no spin
        # what start-up allocated (imports, the model, compiled kernels) is never freed: keep
        # it out of the garbage collector's full passes, which otherwise walk it all (ms) at
        # unpredictable times inside the control loop
        gc.freeze()
        spin(node)
    except SystemExit as e:
        print(e, file=sys.stderr)
        return 1
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except RCLError:
        if rclpy.ok():
            raise                   # a real error; else SIGTERM shut the context down mid-spin
    finally:
        # a clean-up that hangs (seen three times in CI: simulator_node stuck in rclpy's
        # destroy_node, in rcl_node_fini, past 4 s after SIGINT: a known kind of DDS teardown
        # hang) ends the process all the same, with status 0: the node's work is done. The hang
        # holds the GIL, so no Python thread can end it: a native thread does (nodes.teardown),
        # after faulthandler's C thread has printed every thread's stack (what it hung in).
        # Where that thread cannot start, faulthandler ends it, with status 1, before launch's
        # SIGTERM at 5 s.
        stop_signals_quiet()
        watchdog = exit_watchdog(TEARDOWN_GRACE + 0.2, (
            f'the clean-up (destroying the node, shutting rclpy down) did not end within '
            f'{TEARDOWN_GRACE} s (stacks above): exiting without it'))
        faulthandler.dump_traceback_later(TEARDOWN_GRACE if watchdog else 4.0,
                                          exit=watchdog is None)
        if node is not None:
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
        faulthandler.cancel_dump_traceback_later()
        if watchdog is not None:
            watchdog.disarm()
        # (the stop signals stay ignored: a last Ctrl-C or SIGTERM during interpreter
        # finalization, which restores default handlers but leaves an ignored signal ignored,
        # would kill the process with status -2)
    return 0
