"""MkDocs hook: serve the repository's figures/ without copying them into docs/.

Docs pages link figures as ``../figures/NAME.png`` (a path that also works when the Markdown is read on
GitHub or in a checkout). Here every file of figures/ is added to the build as a file whose source path is
``../figures/NAME`` relative to docs/ and whose place in the built site is ``figures/NAME``, so
``mkdocs build --strict`` finds the link targets and copies the files into the site.
"""

from __future__ import annotations

import os

from mkdocs.structure.files import File, Files, InclusionLevel


def on_files(files: Files, config) -> Files:
    docs_dir = config["docs_dir"]
    figures = os.path.normpath(os.path.join(docs_dir, os.pardir, "figures"))
    if not os.path.isdir(figures):
        return files
    for name in sorted(os.listdir(figures)):
        if not os.path.isfile(os.path.join(figures, name)):
            continue
        f = File(
            f"../figures/{name}",
            docs_dir,
            config["site_dir"],
            config["use_directory_urls"],
            inclusion=InclusionLevel.INCLUDED,  # the default would exclude a path starting with '.'
        )
        f.dest_uri = f"figures/{name}"
        files.append(f)
    return files
