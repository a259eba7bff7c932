"""``tendon-robot-sim calibrate``: fit robot parameters to a recorded experiment.

    tendon-robot-sim calibrate demo_output/synthetic_bag --robot config/robot.yaml \
        --fit youngs_modulus,shear_modulus --out calibrated.yaml
    tendon-robot-sim calibrate holds.csv --fit youngs_modulus --bounds youngs_modulus=1e6:1e8 \
        --scheduler tcp://cluster:8786 --out calibrated.yaml
    tendon-robot-sim calibrate step_bag --model dynamic --fit damping,vertebra_mass \
        --out calibrated.yaml

Least squares on the tip errors of the holds (scipy ``least_squares``, log-scaled
parameters, bounds) or, with ``--model dynamic`` and ``damping`` among the fitted
parameters, on the tip error over the whole recording replayed by the dynamic simulator
(a step response: ``synth-experiment --experiment step``), then prints each fitted value
with its 95 % confidence interval and the RMS tip error before and after, and writes the
calibrated robot description.
The model solves run on all local cores (``--workers``) or on a Dask cluster
(``--scheduler``); a progress bar on stderr counts the parameter sets solved.
"""

import argparse

import yaml

from tendon_robot_sim.commands import CommandError
from tendon_robot_sim.commands.validate import (add_recording_options, load_inputs,
                                                load_trajectory, MODEL_ERRORS)
from tendon_robot_sim.core.calibration import calibrate, FITTABLE


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'calibrate', help='fit robot parameters (E, G, ...) to a recorded experiment',
        description='Least-squares fit of rod parameters to the holds of a recording; writes '
                    'the calibrated robot description.')
    add_recording_options(parser)
    parser.add_argument('--fit', required=True, metavar='NAMES',
                        help=f'comma-separated parameters to fit: {", ".join(FITTABLE)} '
                             '(e.g. t1.offset)')
    parser.add_argument('--bounds', default=None, metavar='NAME=LOW:HIGH,...',
                        help='bounds in SI units (default: initial / 10 .. initial x 10)')
    parser.add_argument('--out', required=True, metavar='FILE',
                        help='calibrated robot description YAML to write')
    parser.set_defaults(func=run)


def parse_bounds(text):
    """``'youngs_modulus=1e6:1e8'`` -> {'youngs_modulus': (1e6, 1e8)}."""
    bounds = {}
    for item in (text or '').split(','):
        if not item.strip():
            continue
        name, _, span = item.partition('=')
        low, _, high = span.partition(':')
        try:
            bounds[name.strip()] = (float(low), float(high))
        except ValueError:
            raise CommandError(f'--bounds: {item!r} is not NAME=LOW:HIGH') from None
    return bounds


def run(args: argparse.Namespace) -> int:
    fit = [name.strip() for name in args.fit.split(',') if name.strip()]
    bounds = parse_bounds(args.bounds)
    recording = None
    if args.model == 'dynamic' and 'damping' in fit:
        robot, recording = load_trajectory(args)
        holds = []
        print(f'{len(recording.tip_times)} tip samples over '
              f'{recording.tip_times[-1] - recording.tip_times[0]:.2f} s from '
              f'{args.recording}; fitting {", ".join(fit)} to the trajectory (model dynamic)')
    else:
        robot, holds = load_inputs(args)
        print(f'{len(holds)} holds from {args.recording}; fitting {", ".join(fit)} '
              f'with model {args.model}')
    try:
        result = calibrate(robot, holds, fit, bounds, args.model, args.workers,
                           args.scheduler, recording=recording)
    except MODEL_ERRORS as error:
        raise CommandError(str(error)) from None
    try:
        with open(args.out, 'w') as handle:
            yaml.safe_dump(result.robot.to_dict(), handle, sort_keys=False)
    except OSError as error:
        raise CommandError(f'--out: cannot write {args.out}: {error.strerror}') from None
    print(result.summary())
    print(f'wrote {args.out}')
    return 0
