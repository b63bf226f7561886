"""examples/tutorial.ipynb is docs/tutorial.md, and it runs: the file is what
examples/make_tutorial_notebook.py makes from the page now, and its cells execute in a Jupyter
kernel (nbclient) from a fresh folder, first without the cells tagged as needing an extra (what a
plain install runs), then whole where the [interop] extra is installed. Executing needs the
[notebook] extra (tests/extras.py)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path


from extras import require

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "examples" / "tutorial.ipynb"


def generator():
    spec = importlib.util.spec_from_file_location("make_tutorial_notebook", ROOT / "examples" / "make_tutorial_notebook.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_notebook_is_what_the_script_makes_from_the_tutorial():
    made = generator().notebook((ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8"))
    assert NOTEBOOK.read_text(encoding="utf-8") == made, (
        "examples/tutorial.ipynb is stale: run python examples/make_tutorial_notebook.py")


def test_the_notebook_has_the_tutorial_cells_and_tags_the_interop_ones():
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    code = [cell for cell in cells if cell["cell_type"] == "code"]
    tagged = [cell for cell in code if "needs-interop" in cell["metadata"].get("tags", [])]
    assert len(code) >= 10 and 1 <= len(tagged) < len(code)
    assert all("to_transformer_lens" not in "".join(cell["source"]) for cell in code if cell not in tagged)


def execute(tmp_path: Path, keep_extras: bool):
    """Run the notebook's cells in a kernel, in `tmp_path`; the executed notebook."""
    nbformat = require("nbformat", "notebook")
    nbclient = require("nbclient", "notebook")
    require("ipykernel", "notebook")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    if not keep_extras:
        notebook.cells = [cell for cell in notebook.cells
                          if not any(tag.startswith("needs-") for tag in cell.metadata.get("tags", []))]
    (tmp_path / "programs").symlink_to(ROOT / "programs")
    client = nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    return client.execute()


def outputs(notebook) -> str:
    return "\n".join(output.get("text", "") or str(output.get("data", {}).get("text/plain", ""))
                     for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs)


def test_the_notebook_runs_without_the_extras(tmp_path):
    done = execute(tmp_path, keep_extras=False)
    shown = outputs(done)
    assert "['-', '-', '-', '-', 'b', 'c', 'd']" in shown and "must select one value" in shown
    assert (tmp_path / "induction.rasp").read_text(encoding="utf-8").startswith("\nvocab {a, b, c, d}")


def test_the_whole_notebook_runs_with_the_interop_extra(tmp_path):
    require("transformer_lens", "interop")
    done = execute(tmp_path, keep_extras=True)
    assert "['-', '-', '-', '-', '-', '-', '-']" in outputs(done)  # the ablated induction head
