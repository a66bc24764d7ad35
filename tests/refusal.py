"""One check for a command that must refuse its input: exit 2, nothing on stdout, one line on stderr from
spare-jax (no traceback) holding every given word. Shared by the CLI bad-input tests."""

from __future__ import annotations

from spare_jax.cli import main


def refused(argv, words, capsys) -> str:
    """Run ``argv`` and check the refusal; ``words``: one word or a list of them. Returns the line."""
    code = main(argv)
    cap = capsys.readouterr()
    lines = [ln for ln in cap.err.splitlines() if ln.strip()]
    assert code == 2, (argv, code, cap.err[-2000:])
    assert cap.out == "", argv
    assert len(lines) == 1, (argv, lines)
    assert lines[0].startswith("spare-jax") and "Traceback" not in cap.err
    for word in [words] if isinstance(words, str) else words:
        assert word in lines[0], (word, lines[0])
    return lines[0]
