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
How flaky the DDS tests are: each run K times beside N busy cores, failures counted per test.

A test that talks over DDS (it starts a node, or makes its own) can fail on a loaded machine
where it passes on an idle one: a message lost, a loop stalled, a tolerance that only an idle
machine meets. This runs those tests (the test files that start a node; or the files and ``-k``
given) K times, each time beside N processes spinning on a core each, and prints each test that
failed at least once with its failure count and the first line of each failure's message, the
time of each run, and a total.

    bash scripts/dev.sh run python bench/flakiness.py [--runs 3] [--hogs 1]
        [--files test_task_space_node.py ...] [-k EXPR]

Exit status 1 when any test failed in any run.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

TEST_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'robot_dynamics_ros',
                        'test')
# a test file that starts simulator_node / feedforward_node or makes a node of its own (the
# soak and the shutdown tests start theirs through bench/soak.py and bench/bench_shutdown.py)
DDS = re.compile(r'NodeProcess\(|create_node\(|import soak|bench_shutdown')


def dds_test_files():
    names = []
    for name in sorted(os.listdir(TEST_DIR)):
        if name.startswith('test_') and name.endswith('.py'):
            with open(os.path.join(TEST_DIR, name), encoding='utf-8') as f:
                if DDS.search(f.read()):
                    names.append(name)
    return names


def hogs(n):
    return [subprocess.Popen([sys.executable, '-c', 'while True: pass']) for _ in range(n)]


def one_run(files, hog_count, keyword, xml_path):
    """
    Run pytest once beside ``hog_count`` busy processes; return ({test: outcome}, seconds).

    A failed test's outcome is 'failed: ' and the first line of its message.
    """
    busy = hogs(hog_count)
    t0 = time.monotonic()
    try:
        cmd = [sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider', '-q',
               f'--junitxml={xml_path}', *[os.path.join(TEST_DIR, f) for f in files]]
        if keyword:
            cmd += ['-k', keyword]
        subprocess.run(cmd, cwd=os.path.dirname(TEST_DIR), stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
    finally:
        for p in busy:
            p.kill()
            p.wait()
    outcomes = {}
    if os.path.exists(xml_path):
        for case in ET.parse(xml_path).getroot().iter('testcase'):
            test = f'{case.get("classname", "").rsplit(".", 1)[-1]}::{case.get("name")}'
            failure = case.find('failure')
            if failure is None:
                failure = case.find('error')
            skipped = case.find('skipped') is not None
            outcomes[test] = ('skipped' if skipped else 'passed') if failure is None else \
                'failed: ' + (failure.get('message') or '').strip().split('\n')[0][:400]
    return outcomes, time.monotonic() - t0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--runs', type=int, default=3, help='how many times (default 3)')
    parser.add_argument('--hogs', type=int, default=1,
                        help='busy processes beside the tests, one core each (default 1)')
    parser.add_argument('--files', nargs='+', default=None,
                        help='test files, by name or path (default: every test file that '
                             'starts a node)')
    parser.add_argument('-k', dest='keyword', default='', help="pytest's -k expression")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.hogs < 0:
        parser.error('--runs >= 1 and --hogs >= 0')
    # by name (test_x.py) or by path (robot_dynamics_ros/test/test_x.py, test/test_x.py)
    files = [os.path.basename(f) for f in args.files or dds_test_files()]
    missing = [f for f in files if not os.path.isfile(os.path.join(TEST_DIR, f))]
    if missing:
        parser.error(f'no such test file in {os.path.normpath(TEST_DIR)}: {" ".join(missing)}')
    print(f'{len(files)} test files, {args.runs} runs beside {args.hogs} busy core(s) of '
          f'{os.cpu_count()}: {" ".join(files)}', flush=True)
    failures, seen = collections.Counter(), set()
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.runs):
            outcomes, took = one_run(files, args.hogs, args.keyword,
                                     os.path.join(tmp, f'run{k}.xml'))
            failed = sorted(t for t, o in outcomes.items() if o.startswith('failed'))
            failures.update(failed)
            seen.update(outcomes)
            print(f'run {k + 1}: {len(outcomes)} tests, {len(failed)} failed, {took:.0f} s'
                  + ''.join(f'\n    {t}\n      {outcomes[t][8:]}' for t in failed), flush=True)
    print(f'\nfailures per test over {args.runs} runs beside {args.hogs} busy core(s):')
    for test, count in failures.most_common():
        print(f'  {count}/{args.runs}  {test}')
    print(f'{len(failures)} of {len(seen)} tests failed at least once; '
          f'{sum(failures.values())} failures in {args.runs * len(seen)} test runs')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
