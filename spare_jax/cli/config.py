"""``--config`` files and ``--preset``: their keys checked against the same bounds as the flags, and which flags
were given explicitly."""

from __future__ import annotations

import argparse
import math
import sys

from .base import CLIError
from .deprecation import DeprecatedFlag, deprecation_note
from .model_from_flags import parse_scenario_table


def _config_value(action, key, value):
    """A TOML value checked like the flag it stands for: booleans for switches, numbers (not booleans)
    for numeric settings, strings for the rest."""
    if isinstance(action, argparse._StoreTrueAction):
        if not isinstance(value, bool):
            raise ValueError(f"--config: {key} must be true or false, got {value!r}")
        return value
    if getattr(action.type, "list_of", None) is not None:
        items = value if isinstance(value, list) else [value]
        if isinstance(value, str):
            text = value
        elif items and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items):
            text = ",".join(str(v) for v in items)
        else:
            raise ValueError(f"--config: {key} must be a number, a list of numbers or a comma list, got {value!r}")
        try:
            return action.type(text)
        except argparse.ArgumentTypeError as exc:
            raise ValueError(f"--config: {exc}") from None
    kind = getattr(action.type, "kind", None)
    if kind is not None and isinstance(value, str) and value in getattr(action.type, "words", ()):
        return action.type(value)  # a number flag's word (plan's spares = "auto")
    if kind is not None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"--config: {key} must be a number, got {value!r}")
        if kind == "int":
            if isinstance(value, float):
                if not value.is_integer():
                    raise ValueError(f"--config: {key} must be an integer, got {value!r}")
                value = int(value)
            text = str(value)
        else:
            text = repr(float(value)) if math.isfinite(value) else str(value)
        try:
            return action.type(text)
        except argparse.ArgumentTypeError as exc:
            raise ValueError(f"--config: {exc}") from None
    if not isinstance(value, str):
        raise ValueError(f"--config: {key} must be a string, got {value!r}")
    if action.choices is not None and value not in action.choices:
        raise ValueError(f"--config: {key} must be one of {', '.join(map(str, action.choices))}, got {value!r}")
    if callable(action.type):  # a checked text (--currency, --schemes): as on the command line
        try:
            return action.type(value)
        except argparse.ArgumentTypeError as exc:
            raise ValueError(f"--config: {exc}") from None
    return value


def _take_flag(argv, flag: str, what: str, abbrev: bool = False):
    """Take ``flag VALUE`` or ``flag=VALUE`` out of ``argv``, before argparse sees it; given twice, it is
    refused (the first would be dropped without a word). Returns ``(value or None, its position in the
    remaining argv, the remaining argv)``; ``abbrev`` also matches the prefixes argparse would accept (at least
    ``--pre``)."""
    rest, value, where = [], None, None
    it = iter(range(len(argv)))
    for i in it:
        a = argv[i]
        name = a.split("=", 1)[0]
        if name == flag or (abbrev and len(name) >= 5 and flag.startswith(name)):
            if "=" in a:
                given = a.split("=", 1)[1]
            else:
                if i + 1 >= len(argv):
                    raise CLIError(f"spare-jax: error: {flag} needs {what}")
                given = argv[i + 1]
                next(it, None)
            if where is not None:
                raise CLIError(f"spare-jax: error: {flag} given twice ({value} and {given}): give one")
            value, where = given, len(rest)
        else:
            rest.append(a)
    return value, where, rest


def apply_config(parser, argv):
    """``--config FILE.toml``: set the subcommand's defaults from the file; flags on the line win."""
    argv = list(sys.argv[1:] if argv is None else argv)
    argv = _apply_preset(parser, argv)
    path, _, rest = _take_flag(argv, "--config", "a file")
    if path is None:
        return argv
    try:
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - Python < 3.11
        import tomli as tomllib
    from ..model.inputfile import read_text

    text = read_text(path, "--config")  # a regular file only (a FIFO would wait for a writer for ever)
    try:
        cfg = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"--config: {path} is not valid TOML: {exc}") from None
    except RecursionError:  # arrays or inline tables nested thousands deep
        raise ValueError(f"--config: {path} nests arrays or tables too deeply") from None
    if not cfg:  # an empty file (or comments only) is almost surely the wrong file: the run would use defaults
        raise ValueError(f"--config: {path} holds no settings (empty or comments only); give a file with settings "
                         "or drop --config")
    command = next((a for a in rest if not a.startswith("-")), None)
    subs = parser._subparsers._group_actions[0].choices
    sub = subs.get(command) if command else None
    if sub is None:
        raise ValueError("--config needs a subcommand (e.g. spare-jax run --config run.toml)")
    for key, value in cfg.items():
        if isinstance(value, dict) and key not in subs and key != "scenario":
            raise ValueError(f"--config: unknown section [{key}] in {path} (sections: scenario, {', '.join(subs)})")
    # top-level keys apply to every subcommand; the subcommand's own table wins over them
    known = {a.dest: a for a in sub._actions if a.dest not in ("config", "version")}
    # the flag names are keys too: N = 600, r = 8, ckpt-interval = 30 (besides the dests groups, redundancy, ...)
    alias = {o.lstrip("-").replace("-", "_"): a.dest for a in sub._actions for o in a.option_strings
             if a.dest in known}
    former = {o.lstrip("-").replace("-", "_"): a.new.lstrip("-") for a in sub._actions
              if isinstance(a, DeprecatedFlag) for o in a.option_strings}
    notes = []
    defaults = {}
    tables = [{k: v for k, v in cfg.items() if not isinstance(v, dict)}]
    if "scenario" in cfg:
        if "job_mtbf" not in known:
            raise ValueError(f"--config: 'spare-jax {command}' takes no [scenario]")
        scenario_table, levels = parse_scenario_table(cfg["scenario"], path)
        tables.append(scenario_table)
        if levels is not None:
            if "domain_size" not in known:
                raise ValueError(f"--config: 'spare-jax {command}' takes no failure domains (scenario.domains)")
            defaults["scenario_domains"] = levels
    tables.append(cfg.get(command, {}))
    for table in tables:
        seen = {}
        for key, value in table.items():
            dest = key.replace("-", "_")
            if dest in former:  # a former flag name: works, with the note
                note = deprecation_note(f"--config key {key!r}", repr(former[dest]), command)
                notes += [note] if note not in notes else []
            dest = dest if dest in known else alias.get(dest, dest)
            if dest not in known or dest in ("help", "func", "title"):
                where = (f"[{command}]" if table is cfg.get(command) else
                         "[scenario]" if table is not tables[0] else "the top level")
                raise ValueError(f"--config: unknown setting {key!r} for 'spare-jax {command}' (in {where})")
            if dest in seen:
                raise ValueError(f"--config: {key!r} and {seen[dest]!r} set the same thing")
            if dest == "preset":
                raise ValueError("--config: preset is a command-line flag (--preset NAME); a config file holds "
                                 "the settings themselves")
            seen[dest] = key
            defaults[dest] = _config_value(known[dest], key, value)
    given = tuple(k for k in defaults if k in known)  # set explicitly (main's args.given)
    for key in ("job_mtbf", "job_fraction"):  # flags on the line win over these (see scenario_from_flags)
        if key in defaults:
            defaults["cfg_" + key] = defaults.pop(key)
    sub.set_defaults(config_given=given, deprecations=notes, **defaults)
    return rest


def _apply_preset(parser, argv):
    """``--preset NAME``: the preset's settings become the subcommand's defaults (``--config`` and flags on
    the line win); settings a subcommand does not take are skipped. Returns argv without the flag."""
    from ..model.presets import get_preset
    from ..model.scenario import DomainLevel

    name, where, rest = _take_flag(argv, "--preset", "a name", abbrev=True)  # argparse takes --pres too
    if name is None:
        return argv
    preset = get_preset(name)
    first = next((i for i, a in enumerate(rest) if not a.startswith("-")), None)
    command = None if first is None else rest[first]
    if command is not None and where <= first:
        raise ValueError("--preset goes after the subcommand (e.g. spare-jax wipeout --preset llama3-16k)")
    subs = parser._subparsers._group_actions[0].choices
    sub = subs.get(command) if command else None
    if sub is None or "preset" not in {a.dest for a in sub._actions}:
        takers = ", ".join(n for n, s in subs.items() if "preset" in {a.dest for a in s._actions})
        raise ValueError(f"--preset {name} needs a subcommand that takes it ({takers})"
                         + (f", not {command!r}" if command else ""))
    known = {a.dest for a in sub._actions}
    defaults = {k: v for k, v in preset.settings.items() if k in known and k != "job_mtbf"}
    defaults["preset"] = name
    if "job_mtbf" in preset.settings and "job_mtbf" in known:
        defaults["preset_job_mtbf"] = preset.settings["job_mtbf"]
    documented = {d["input"]: d["value"] for d in preset.provenance}
    if "repair_time_min" in documented and "repair_time" in known:  # applied where the outcome needs one (elastic)
        defaults["preset_repair_time"] = documented["repair_time_min"]
    if preset.domains and "domain_size" in known:
        defaults["scenario_domains"] = [DomainLevel(d["size"], d["mtbf"], d.get("name", "")) for d in preset.domains]
    sub.set_defaults(**defaults)
    return rest


