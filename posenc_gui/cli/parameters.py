"""The command line's shared parts: the encoding parameters' flags and the panels' options, made from the
specs and the panel registry once for the window's command line (:mod:`posenc_gui.cli.window`) and
``export``'s (:mod:`posenc_gui.cli.plan`), and :class:`UsageError`, the one-line error of a bad command line.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..model import OPTION_SPECS, SCHEMES, EncodingParams, ParamSpec, find_preset, presets
from ..model.core.params import SIZE_SPECS
from ..model.schemes import scheme as scheme_info

if TYPE_CHECKING:
    from ..views.registry import PanelOption

#: Exit status: done; an export failed; a bad command line or session file (as argparse's), nothing done.
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """A bad command line; the message is one line."""


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors raise :class:`UsageError` (one line) instead of exiting."""

    def error(self, message: str) -> None:  # one line, no usage dump
        raise UsageError(message)


def panel_options(classes: Sequence[type]) -> dict[str, dict[str, PanelOption]]:
    """``{flag: {panel_id: option}}`` for every option the panels in ``classes`` declare (``cli_options``)."""
    table: dict[str, dict[str, PanelOption]] = {}
    for cls in classes:
        for option in cls.cli_options:
            table.setdefault(option.flag, {})[cls.panel_id] = option
    return table


def add_panel_flags(parser: argparse.ArgumentParser, classes: Sequence[type]) -> None:
    """Add a flag for each panel option of ``classes`` (``cli_options``), grouped by the panels that take it.

    The window's command line and ``export``'s are both made with it: a panel's flags are declared once.
    """
    groups: dict[str, argparse._ArgumentGroup] = {}
    for flag, by_panel in panel_options(classes).items():
        option = next(iter(by_panel.values()))
        owners = ", ".join(by_panel)
        if owners not in groups:
            plural = "s" if len(by_panel) > 1 else ""
            groups[owners] = parser.add_argument_group(f"options of the {owners} panel{plural}")
        if option.spec is not None:  # a shared view setting: as its control, from its spec
            groups[owners].add_argument(flag, dest=option.dest, default=None, **spec_flag(option.spec, option.help))
            continue
        default = option.default_text()
        text = f"{option.help}. Default: {default}." if default else option.help
        if option.boolean:
            groups[owners].add_argument(flag, dest=option.dest, action=argparse.BooleanOptionalAction, default=None,
                                        help=text)
        else:
            groups[owners].add_argument(flag, dest=option.dest, type=option.type, choices=option.choices,
                                        metavar=option.metavar, default=None, help=text)


def chosen_options(args: argparse.Namespace, classes: Sequence[type],
                   panel_ids: Sequence[str]) -> dict[str, list[tuple[PanelOption, Any]]]:
    """The panel options given, for each of ``panel_ids`` that has them; a flag none of them has is refused."""
    chosen: dict[str, list[tuple[PanelOption, Any]]] = {panel_id: [] for panel_id in panel_ids}
    for flag, by_panel in panel_options(classes).items():
        value = getattr(args, next(iter(by_panel.values())).dest, None)
        if value is None:
            continue
        owners = [panel_id for panel_id in panel_ids if panel_id in by_panel]
        if not owners:
            raise UsageError(f"{flag} is an option of the {', '.join(by_panel)} panel, not of {', '.join(panel_ids)}")
        for panel_id in owners:
            chosen[panel_id].append((by_panel[panel_id], value))
    return chosen


def needs_panel_flags(parser: argparse.ArgumentParser, argv: Sequence[str]) -> bool:
    """Whether ``argv`` may hold a panel's flag: some argument looks like a flag and is not exactly one of
    ``parser``'s (made without the panels' flags), or asks for the help, which lists them all.

    Otherwise the full parser would read ``argv`` exactly as ``parser`` does: an exact flag is never taken
    for an abbreviation, a negative number is a value, and the panels' flags all default to None.
    """
    own = set(parser._option_string_actions) - {"-h", "--help"}
    for arg in argv:
        flag = arg.split("=", 1)[0]
        if arg.startswith("-") and flag not in own and not parser._negative_number_matcher.match(arg):
            return True
    return False


def apply_panel_flags(panel: Any, options: Sequence[tuple[PanelOption, Any]]) -> None:
    """Give ``panel`` each option's value (``apply_options``); :class:`UsageError` naming the flag for a bad one."""
    for option, value in options:
        try:
            panel.apply_options(**{option.dest: value})
        except (ValueError, TypeError) as error:  # "compare: …" is said once: "--compare: …"
            raise UsageError(f"{option.flag}: {str(error).removeprefix(option.dest + ': ')}") from None



# ------------------------------------------------------------- parameters
def _flag_type(spec: ParamSpec) -> Callable[[str], object]:
    """An argparse type that reports the spec's own message (parameter name and range)."""

    def parse(text: str) -> object:
        try:
            return spec.parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    parse.__name__ = spec.name
    return parse


def _scheme_key(text: str) -> str:
    """An argparse type: a scheme's key, or the model's message naming the schemes."""
    try:
        return scheme_info(text.strip()).key
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _preset_name(text: str) -> str:
    """An argparse type: a preset's name (:attr:`~posenc_gui.model.Preset.name`), or the message naming them."""
    try:
        return find_preset(text)[1].name
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def spec_flag(spec: ParamSpec, help_text: str | None = None) -> dict[str, Any]:
    """``add_argument`` keywords of a flag whose value follows ``spec``: its type (refusing a value with the
    spec's message), metavar, and help (``help_text``, default the spec's own) with its range and default."""
    help_text = spec.help if help_text is None else help_text
    return {"type": _flag_type(spec), "metavar": spec.metavar,
            "help": f"{help_text.rstrip('.')}. Values: {spec.range_text()}. Default: {spec.default_text()}."}


def _parameter_flag(spec: ParamSpec) -> dict[str, Any]:
    """:func:`spec_flag` of a size or a scheme's parameter, naming the schemes that take it."""
    flag = spec_flag(spec)
    if spec not in SIZE_SPECS:
        users = [key for key, info in SCHEMES.items() if info.spec(spec.name) is not None]
        flag["help"] += f" Schemes: {', '.join(users)}."
    return flag


def _preset_help() -> str:
    names = ", ".join(f"'{preset.name}'" for _, preset in presets())
    return (f"start from a real model's or a textbook setup: its scheme, sizes and options (the others at their "
            f"defaults); the flags given override it. NAME is one of {names} (case ignored; the Parameters "
            "panel's Preset box lists them with their sources)")


def add_parameter_flags(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """The encoding flags shared by the launch and ``export`` commands; those of a parameter by destination.

    ``--model`` and ``--preset``, then one flag per size and per scheme parameter
    (:data:`~posenc_gui.model.OPTION_SPECS`), its metavar, help, range and default from its spec.
    The returned actions are ``--scheme`` and the parameters' (``"seq_len"`` …), not ``--model`` or ``--preset``.
    """
    group = parser.add_argument_group("encoding parameters")
    group.add_argument("--model", metavar="PATH",
                       help="show a model from disk: a Hugging Face folder (config.json and model.safetensors or "
                       "its shards), a .safetensors, .gguf, .npy or .npz file. Its learned position table becomes "
                       "the learned_file scheme (N its length, d_model its width), its RoPE set-up the rope "
                       "scheme (d_model the head dimension); --scheme learned_file or rope chooses when it has "
                       "both, --tensor NAME shows another 2-D tensor as the table; other flags apply on top")
    group.add_argument("--preset", metavar="NAME", type=_preset_name, help=_preset_help())
    actions = [group.add_argument("--scheme", type=_scheme_key, metavar="NAME",
                                  help=f"encoding scheme: {', '.join(SCHEMES)}. Default: sinusoidal.")]
    for spec in (*SIZE_SPECS, *OPTION_SPECS.values()):
        actions.append(group.add_argument(spec.flag, dest=spec.name, **_parameter_flag(spec)))
    return {action.dest: action for action in actions}


def overrides_from_args(args: argparse.Namespace) -> dict:
    """The encoding parameters given on the command line, as name → value."""
    names = ("scheme", *(spec.name for spec in SIZE_SPECS), *OPTION_SPECS)
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}


def base_values(args: argparse.Namespace, scheme: str | None = None,
                tensor: str | None = None) -> tuple[dict, str | None]:
    """The parameters ``--preset`` or ``--model`` set (flat name → value; the flags given go on top), and what
    the model is shown as (None without ``--model``); ``({}, None)`` when neither is given.

    ``scheme`` and ``tensor`` are those given: they choose what a model shows (see :func:`model_values`);
    a preset of another scheme than ``scheme`` is refused.

    Raises
    ------
    ValueError
        One line: both given, a preset of another scheme, or a model that does not open.
    """
    model, preset = getattr(args, "model", None), getattr(args, "preset", None)
    if model is not None and preset is not None:
        raise ValueError("give --preset or --model, not both: each sets the scheme and its options")
    if preset is not None:
        params = EncodingParams.from_preset(preset)
        if scheme is not None and scheme != params.scheme:
            raise ValueError(f"--preset {preset} is a setup of the {params.scheme} scheme, not of --scheme {scheme}")
        return params.as_dict(), None
    if model is not None:
        return model_values(model, scheme, tensor)
    return {}, None


def model_values(path: str, scheme: str | None = None, tensor: str | None = None) -> tuple[dict, str]:
    """The parameters that show the model at ``path`` (as flat name → value) and what they show, in words.

    ``scheme`` (``learned_file`` or ``rope``) chooses between a model's table
    and its RoPE set-up; ``tensor`` makes that tensor the table.

    Raises
    ------
    ValueError
        One line: the file does not open (naming it and why), or has nothing to show.
    """
    from ..model.files.model_setup import model_setups, one_line

    try:
        opened = model_setups(path)
        setup = opened.setup(scheme if scheme in ("learned_file", "rope") else None, tensor or None)
    except ValueError as error:  # ModelFileError is one
        raise ValueError(f"--model {path}: {one_line(error)}") from None
    return setup.params.as_dict(), opened.summary(setup)


def launch_overrides(args: argparse.Namespace) -> tuple[dict, str | None]:
    """The command line's parameters, on those of ``--preset`` or ``--model`` when one is given, and what the
    model is shown as.

    Raises
    ------
    ValueError
        One line, for a model that does not open or has nothing to show, or a preset that does not fit.
    """
    given = overrides_from_args(args)
    values, summary = base_values(args, given.get("scheme"), given.get("tensor"))
    return {**values, **given}, summary


def params_from_args(args: argparse.Namespace, start: EncodingParams | None = None) -> EncodingParams:
    """``start`` (defaults if omitted) with the command line's parameters applied.

    Raises
    ------
    ValueError
        With the model's message for an out-of-range value or a parameter the scheme does not take.
    """
    return (start or EncodingParams()).replaced(fit_sizes=True, **launch_overrides(args)[0])
