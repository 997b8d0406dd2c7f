"""A real Jupyter kernel (nbclient + ipykernel) runs a notebook as a user would: a jitted function
defined in a cell, an error located at the cell and line, `lower().as_text()`, the progress display
in the cell's output, and the cell's function sent to Dask workers (another process's `__main__`)
that run it without compiling."""
import numpy as np
import pytest

nbformat = pytest.importorskip("nbformat", reason="the `notebook` extra is not installed: pip install -e '.[notebook]'")
nbclient = pytest.importorskip("nbclient", reason="the `notebook` extra is not installed: pip install -e '.[notebook]'")
pytest.importorskip("ipykernel", reason="the `notebook` extra is not installed: pip install -e '.[notebook]'")

DEFINE = """\
import numpy as np, pyjitc
@pyjitc.jit
def wave(x):
    return np.sin(x) * 2.0
x = np.linspace(0.0, 3.0, 7)
print(np.array_equal(wave(x), np.sin(x) * 2.0), wave(x).dtype)"""

ERROR = """\
@pyjitc.jit
def noisy(x):
    y = x + 1
    print(y)
    return y"""

LOWER = """print(wave.lower(pyjitc.Template((7,), np.float64)).as_text())"""

PROGRESS = """\
pyjitc.progress.DELAY = 0.0     # show the display at once (it waits 1 s by default)
@pyjitc.jit
def cube(x):
    return x * x * x
print(cube(np.arange(4.0)).tolist())"""

DASK = """\
from dask.distributed import Client, wait
client = Client({address!r})
futures = client.map(wave, [x + k for k in range(4)])
wait(futures, timeout=60)       # a worker that can't unpickle the function would leave them pending
results = client.gather(futures)
print("equal:", all(np.array_equal(r, np.sin(x + k) * 2.0) for k, r in enumerate(results)))
print("worker compiles:", sorted(client.run(lambda: dict(__import__("pyjitc").progress.COMPILES)).values(), key=str))
client.close()"""


@pytest.fixture(scope="module")
def notebook():
    """The notebook, executed once (with a Dask cluster for its last cell when the extra is there)."""
    cells = [DEFINE, ERROR, LOWER, PROGRESS]
    cluster = None
    try:
        import dask.distributed as distributed
        cluster = distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                                           dashboard_address=None, env={"PYJITC_CACHE_DIR": "off"})
        cells.append(DASK.format(address=cluster.scheduler_address))
    except ImportError:
        pass
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    try:
        nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True).execute()
    finally:
        if cluster is not None:
            cluster.close()
    return nb


def text_of(cell, stream="stdout") -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("name") == stream)


def test_a_function_defined_in_a_cell_compiles_and_equals_numpy(notebook):
    assert text_of(notebook.cells[0]).split() == ["True", "float64"]


def test_an_error_names_the_cell_and_line_as_ipython_does(notebook):
    (error,) = [o for o in notebook.cells[1].outputs if o.output_type == "error"]
    assert error.ename == "ForbiddenError"
    assert error.evalue.startswith("Cell In[2]:4:5: print is not allowed inside @jit")
    assert "print(y)" in error.evalue


def test_lower_as_text_prints_the_stablehlo_module(notebook):
    text = text_of(notebook.cells[2])
    assert "func.func @wave(%arg0: tensor<7xf64>)" in text and "stablehlo.sine" in text


def test_the_progress_display_shows_in_the_cells_output(notebook):
    assert text_of(notebook.cells[3]).strip() == "[0.0, 1.0, 8.0, 27.0]"
    shown = text_of(notebook.cells[3], "stderr")
    assert "pyjitc: compiling cube: " in shown and "IREE compile" in shown


def test_a_cells_function_runs_on_dask_workers_without_compiling(notebook):
    if len(notebook.cells) < 5:
        pytest.skip("the `dask` extra is not installed: pip install -e '.[dask]'")
    out = text_of(notebook.cells[4])
    assert "equal: True" in out
    assert "worker compiles: [{}, {}]" in out, out + "".join(str(o) for o in notebook.cells[4].outputs)
