"""Write the preset tables of docs/scenarios.md from the presets (``spare_jax.model.preset_report.markdown_tables``):
every input with its kind, what each source reports and whether the preset was fitted to it.
``tests/test_presets.py`` fails when the committed tables differ from what this writes.

    python experiments/preset_tables.py
"""
import pathlib

from spare_jax.model.preset_report import replace_tables

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "scenarios.md"

if __name__ == "__main__":
    DOC.write_text(replace_tables(DOC.read_text()))
    print(f"wrote the preset tables of {DOC}")
