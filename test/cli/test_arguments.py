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
The argument parser of every command: one-line errors, negative number lists as values.

argparse takes ``-0.3,-0.3`` for an option; every option that takes a value must accept a
comma-separated list that starts with a minus sign, as users type it.
"""

import argparse

import pytest

from tendon_robot_sim import cli
from tendon_robot_sim.commands import input_file


def subparsers(parser: argparse.ArgumentParser, prefix=()):
    """Yield (command words, parser) of every command and sub-command."""
    found = False
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found = True
            for name, sub in action.choices.items():
                yield from subparsers(sub, prefix + (name,))
    if not found:
        yield prefix, parser


def value_options():
    """Yield (command words, option string, parser) of every option that takes one value."""
    for words, parser in subparsers(cli.build_parser()):
        for action in parser._actions:
            if (action.option_strings and action.nargs is None and action.choices is None
                    and not isinstance(action, (argparse._StoreConstAction,
                                                argparse._HelpAction))):
                yield words, action.option_strings[-1], parser


OPTIONS = list(value_options())


@pytest.mark.parametrize('words, option, parser', OPTIONS,
                         ids=[' '.join(w) + ' ' + o for w, o, _ in OPTIONS])
def test_a_negative_number_list_is_a_value(words, option, parser, capsys):
    """The list reaches the option: parsed, or refused by the option's own type check."""
    value = '-0.34,-1e-3,-2'
    argv = [option, value]
    for action in parser._actions:
        if action.required and action.option_strings and option not in action.option_strings:
            argv += [action.option_strings[-1], sorted(action.choices)[0] if action.choices
                     else __file__ if action.type is input_file else '1']
    for group in parser._mutually_exclusive_groups:
        if group.required and not any(option in a.option_strings for a in group._group_actions):
            argv += [group._group_actions[0].option_strings[-1], '1']
    argv += [sorted(a.choices)[0] if a.choices else 'x'
             for a in parser._actions if not a.option_strings and a.nargs is None]
    try:
        args = parser.parse_args(argv)
    except SystemExit:
        err = capsys.readouterr().err
        assert 'expected one argument' not in err, err
        assert f'argument {option}' in err and err.count('\n') == 1, err
    else:
        parsed = getattr(args, parser._option_string_actions[option].dest)
        assert str(parsed[-1] if isinstance(parsed, list) else parsed) == value


def test_the_vector_options_are_all_covered():
    """The options users give vectors to are among those checked above."""
    names = {(' '.join(w), o) for w, o, _ in OPTIONS}
    for expected in (('pcr fk', '--motor-angles-deg'), ('pcr ik', '--position'),
                     ('pcr ik', '--force'), ('snake forward', '--tensions'),
                     ('snake forward', '--angles'), ('cc', '--tip'), ('statics', '--tensions'),
                     ('simulate', '--tensions'), ('cc-dynamics', '--tensions')):
        assert expected in names, expected


def test_a_parse_error_is_one_line(capsys):
    assert cli.main(['snake', 'forward', '--tensions', '1,1,1,1', '--dt', '-1']) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1
    assert 'argument --dt: must be a time step within [1e-09, 3600] s, got -1' in err


COMMANDS = list(subparsers(cli.build_parser()))


@pytest.mark.parametrize('words, parser', COMMANDS, ids=[' '.join(w) for w, _ in COMMANDS])
def test_help_states_each_default_once_and_never_none(words, parser):
    """``--help`` says an option's default once, in words or as a value, never 'None'."""
    for action in parser._actions:
        text = parser._get_formatter()._expand_help(action) if action.help else ''
        assert '(default: None)' not in text and text.count('(default') <= 1, (
            f'{" ".join(words)} {action.option_strings}: {text}')


def test_a_command_line_builds_only_its_command_and_the_same_parser_for_it():
    """A command imports what its own module needs, not what every command's module does."""
    whole = dict(subparsers(cli.build_parser()))
    for name in cli.COMMANDS:
        word = cli.command_word(name)
        only = cli.needed_commands([word, '--help'])
        assert only == (name,)
        alone = dict(subparsers(cli.build_parser(only)))
        assert set(alone) == {words for words in whole if words[0] == word}
        for words, parser in alone.items():
            assert ([a.option_strings for a in parser._actions]
                    == [a.option_strings for a in whole[words]._actions]), words
    # help and unknown names get the whole tool (its list of commands, its error)
    for argv in ([], ['--help'], ['simulat'], ['cc_dynamics']):
        assert cli.needed_commands(argv) == cli.COMMANDS
