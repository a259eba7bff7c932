# Copyright 2026 tendon_robot_sim maintainers
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
The class "sizes of the work": no number of a command takes the machine's memory or time.

``pcr trajectory --points 1000000000`` took 3.2 GB in 25 s, ``replay --rate 1e-30`` never
ended. A count, rate or factor that sizes the work gets the argument type
``commands.within(low, high)`` (the bound on the type, checked when parsed), or is bounded
where the command knows the rest (``check_steps``, the description's ranges ...). The table
is built from the parser: every option whose type has no upper bound must be listed below
with the place that bounds it or why it sizes nothing, so that a new option cannot forget.
"""

import argparse

from cli_commands import actions
import pytest
from tendon_robot_sim.commands import (finite, non_negative, non_negative_int, positive,
                                       positive_int)

UNBOUNDED = (positive, positive_int, non_negative, non_negative_int, finite, int, float)

# (command, option): where its size is bounded, or why it sizes no work
BOUNDED_ELSEWHERE = {
    ('simulate', '--duration'): 'check_steps: at most 1e12 steps',
    ('simulate', '--max-time'): 'check_steps: at most 1e12 steps',
    ('cc-dynamics', '--duration'): 'check_steps: at most 1e7 kept steps',
    ('snake inverse', '--duration'): 'MAX_STEPS samples of the motion',
    ('snake forward', '--duration'): 'MAX_STEPS steps',
    ('snake forward', '--ramp'): 'a time within the run',
    ('snake inverse', '--wrench-link'): 'a link of the snake',
    ('snake forward', '--wrench-link'): 'a link of the snake',
    ('demo', '--tension'): "the tendons' max_tension",
    ('demo', '--hold'): 'demo: at most 60 s',
    ('demo', '--target-hold'): 'demo: at most 60 s',
    ('demo', '--elements'): 'the description: rod.elements <= 1000',
    ('emulate', '--time-constant'): 'a lag of the emulated motors: no work',
    ('emulate', '--duration'): 'runs until stopped: Ctrl-C ends it (0)',
    ('emulate', '--disconnect-every'): 'a fault interval: no work',
    ('emulate', '--down-time'): 'a fault interval: no work',
    ('emulate', '--seed'): 'a seed: no work',
    ('record', '--duration'): 'runs until stopped: Ctrl-C ends it (0)',
    ('synth-experiment', '--youngs-modulus'): 'the description: PHYSICAL_RANGES',
    ('synth-experiment', '--shear-modulus'): 'the description: PHYSICAL_RANGES',
    ('synth-experiment', '--vertebra-mass'): 'the description: PHYSICAL_RANGES',
    ('synth-experiment', '--damping-ratio'): 'the description: rod.damping.ratio < 1',
    ('synth-experiment', '--stiffness-factor'): 'the description: PHYSICAL_RANGES',
    ('synth-experiment', '--damping-factor'): 'the description: PHYSICAL_RANGES',
    ('synth-experiment', '--disc-twist-deg'): 'synth-experiment: MAX_TWIST',
    ('synth-experiment', '--tension'): "the tendons' max_tension",
    ('synth-experiment', '--seed'): 'a seed: no work',
    ('validate', '--hold-time'): 'picks holds in the bag: no work beyond the bag',
    ('validate', '--tip-tolerance'): 'picks holds in the bag: no work beyond the bag',
    ('calibrate', '--hold-time'): 'picks holds in the bag: no work beyond the bag',
    ('calibrate', '--tip-tolerance'): 'picks holds in the bag: no work beyond the bag',
    ('validate', '--start'): 'a time within the bag (test_experiment_window.py)',
    ('validate', '--end'): 'a time within the bag (test_experiment_window.py)',
    ('calibrate', '--start'): 'a time within the bag (test_experiment_window.py)',
    ('calibrate', '--end'): 'a time within the bag (test_experiment_window.py)',
    ('pcr workspace', '--per-height'): 'MAX_WORKSPACE_SOLVES',
    ('pcr workspace', '--radius'): 'places the samples: no work',
    ('pcr trajectory', '--radius'): 'places the helix: beyond reach is exit 1',
    ('dataset', '--samples'): 'dataset: at most 1e8 samples a run',
    ('dataset', '--random-state'): 'a seed: no work',
    ('dataset', '--chunk-size'): 'at most the samples',
    ('dataset', '--max-chunks'): 'a limit: less work',
}


def unbounded_options():
    for command, action in actions():
        if action.type in UNBOUNDED and action.option_strings:
            yield command, action.option_strings[-1]


def test_every_number_that_sizes_the_work_is_bounded():
    missing = sorted(set(unbounded_options()) - set(BOUNDED_ELSEWHERE))
    assert missing == [], (
        f'{missing}: give these options type=commands.within(low, high) or, where the command '
        'bounds them itself, a row in BOUNDED_ELSEWHERE (and one in test_bad_input.py)')
    stale = sorted(set(BOUNDED_ELSEWHERE) - set(unbounded_options()))
    assert stale == [], f'{stale}: no longer unbounded types; drop their rows'


def bounded_options():
    for command, action in actions():
        if hasattr(action.type, 'bounds') and action.option_strings:
            yield pytest.param(command, action, id=f'{command} {action.option_strings[-1]}')


@pytest.mark.parametrize('command, action', list(bounded_options()))
def test_a_bounded_number_refuses_a_value_beyond_its_bounds_when_parsed(command, action):
    low, high = action.type.bounds
    for value in (high * 10 + 1, low - 1):
        with pytest.raises(argparse.ArgumentTypeError, match=r'must be .* within \['):
            action.type(str(value))
    assert action.type(str(high)) == high and action.type(str(low)) == low
