"""Subcommands of ``tendon-robot-sim`` (see :mod:`tendon_robot_sim.cli`) and what they share."""


class CommandError(Exception):
    """A user error: printed to stderr as one line, exit code 2."""


def parse_values(text: str, option: str):
    """Per-tendon values of a command-line option, by position or by name.

    ``'0,2,0,0'`` -> [0.0, 2.0, 0.0, 0.0]; ``'t1=2,t3=1'`` -> {'t1': 2.0, 't3': 1.0}.
    Raises :class:`CommandError` naming ``option`` and the bad item.
    """
    items = [item.strip() for item in text.split(',')]
    named = ['=' in item for item in items]
    if any(named) and not all(named):
        raise CommandError(f'{option}: use either values or name=value pairs, got {text!r}')
    values = {}
    for index, item in enumerate(items):
        name, _, number = item.rpartition('=')
        try:
            value = float(number)
        except ValueError:
            raise CommandError(f'{option}: item {index} ({item!r}) is not a number') from None
        key = name.strip() if all(named) else index
        if key in values:
            raise CommandError(f'{option}: tendon {key!r} is given twice')
        values[key] = value
    return values if all(named) else list(values.values())
