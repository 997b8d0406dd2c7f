"""The corpus: each Entry names a function by import path ("package.module:function") and builds
its inputs from a NumPy random Generator. Nothing here is copied from the packages: the functions
are imported and called as their authors wrote them."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Entry:
    path: str                      # "module:attribute" (attribute may be dotted)
    build: Callable                # rng -> (args tuple, kwargs dict)
    package: str = ""              # the distribution that provides it (for the report)
    tags: tuple = field(default=())   # "fast": in the test suite's subset


def _(path, build, package="", tags=()):
    return Entry(path, build, package or path.split(".")[0].split(":")[0], tags)


def vec(n=1000):
    return lambda r: ((r.standard_normal(n),), {})


def vec2(n=1000, positive=False):
    def build(r):
        a, b = r.random(n), r.random(n)
        return ((a, b) if positive else (a - 0.5, b - 0.5)), {}
    return build


def mat(m=64, n=64):
    return lambda r: ((r.standard_normal((m, n)),), {})


def args(*values, **kw):
    return lambda r: (values, kw)


def particles(n=200, d=2, scale=1.0):
    return lambda r: (((r.random((n, d)) * 2 - 1) * scale,), {})


ENTRIES: list[Entry] = [
    # ---------------------------------------------------------------- NumPy's own Python-level functions
    _("numpy:cov", mat(8, 200), tags=("fast",)),
    _("numpy:corrcoef", mat(8, 200)),
    _("numpy:diff", vec(), tags=("fast",)),
    _("numpy:ediff1d", vec()),
    _("numpy:gradient", vec()),
    _("numpy:trapezoid", vec()),
    _("numpy:average", lambda r: ((r.random((50, 40)),), {"axis": 0, "weights": r.random(50)})),
    _("numpy:median", mat(51, 40)),
    _("numpy:percentile", lambda r: ((r.random((30, 20)), 75.0), {"axis": 0})),
    _("numpy:quantile", lambda r: ((r.random(101), 0.3), {})),
    _("numpy:ptp", mat()),
    _("numpy:kron", lambda r: ((r.random((8, 8)), r.random((5, 5))), {})),
    _("numpy:cross", lambda r: ((r.random((100, 3)), r.random((100, 3))), {})),
    _("numpy:polyval", lambda r: ((r.random(6), r.random(500)), {})),
    _("numpy:interp", lambda r: ((r.random(300) * 10, np.linspace(0, 10, 50), np.sin(np.linspace(0, 10, 50))), {})),
    _("numpy:convolve", lambda r: ((r.random(500), r.random(9)), {})),
    _("numpy:correlate", lambda r: ((r.random(500), r.random(9)), {"mode": "same"})),
    _("numpy:allclose", vec2()),
    _("numpy:isclose", vec2()),
    _("numpy:sinc", vec()),
    _("numpy:i0", vec()),
    _("numpy:unwrap", lambda r: ((np.cumsum(r.random(500)),), {})),
    _("numpy:angle", vec()),
    _("numpy:tril", mat(), tags=("fast",)),
    _("numpy:triu", mat()),
    _("numpy:vander", lambda r: ((r.random(20),), {"N": 5})),
    _("numpy:roll", lambda r: ((r.random((30, 40)), 3), {"axis": 1})),
    _("numpy:rot90", mat(30, 40)),
    _("numpy:flip", mat(30, 40)),
    _("numpy:meshgrid", lambda r: ((r.random(30), r.random(20)), {"indexing": "ij"})),
    _("numpy:atleast_2d", vec()),
    _("numpy:nan_to_num", lambda r: ((np.where(r.random(200) < 0.2, np.nan, r.standard_normal(200)),), {})),
    _("numpy:select", lambda r: (([r.random(100) < 0.3, r.random(100) < 0.6], [r.random(100), r.random(100)]), {})),
    _("numpy:histogram", lambda r: ((r.random(1000),), {"bins": 10, "range": (0.0, 1.0)})),
    _("numpy:bincount", lambda r: ((r.integers(0, 10, 500),), {"minlength": 10})),
    _("numpy:outer", vec2(50)),
    _("numpy:tensordot", lambda r: ((r.random((10, 20, 30)), r.random((30, 20, 5))), {"axes": ([1, 2], [1, 0])})),
    _("numpy:trace", mat()),
    _("numpy:linspace", args(0.0, 2.0, 50)),
    _("numpy:logspace", args(0.0, 2.0, 50)),
    _("numpy:geomspace", args(1.0, 1000.0, 50)),
    _("numpy:around", lambda r: ((r.standard_normal(100) * 100, 1), {})),
    _("numpy:diagflat", vec(20)),
    _("numpy:tile", lambda r: ((r.random((3, 4)), (2, 3)), {})),
    _("numpy:pad", lambda r: ((r.random((20, 20)), 2), {"mode": "edge"})),
    _("numpy:nanmean", lambda r: ((np.where(r.random(200) < 0.2, np.nan, r.random(200)),), {})),
    _("numpy:nanstd", lambda r: ((np.where(r.random(200) < 0.2, np.nan, r.random(200)),), {})),
    _("numpy:nanvar", lambda r: ((np.where(r.random(200) < 0.2, np.nan, r.random(200)),), {})),
    _("numpy:count_nonzero", lambda r: ((r.random(200) < 0.5,), {})),
    _("numpy:einsum", lambda r: (("ij,jk->ik", r.random((20, 30)), r.random((30, 10))), {})),
    _("numpy:fix", vec()),
    _("numpy:real_if_close", vec()),
    _("numpy.linalg:norm", mat(), tags=("fast",)),
    _("numpy.linalg:matrix_power", lambda r: ((r.random((10, 10)) / 10, 5), {})),
    _("numpy.linalg:multi_dot", lambda r: (([r.random((10, 20)), r.random((20, 30)), r.random((30, 5))],), {})),
    _("numpy.linalg:det", lambda r: ((r.random((10, 10)) + 10 * np.eye(10),), {})),
    _("numpy.linalg:inv", lambda r: ((r.random((10, 10)) + 10 * np.eye(10),), {})),
    _("numpy.linalg:solve", lambda r: ((r.random((10, 10)) + 10 * np.eye(10), r.random(10)), {})),
    _("numpy.lib.stride_tricks:sliding_window_view", lambda r: ((r.random(100), 5), {})),
    _("numpy:hanning", args(64)),
    _("numpy:hamming", args(64)),
    _("numpy:blackman", args(64)),
    _("numpy:bartlett", args(64)),
    _("numpy:kaiser", args(64, 8.6)),
    # ---------------------------------------------------------------- numpy-financial
    _("numpy_financial:fv", args(0.05 / 12, 120, -100.0, -100.0), "numpy-financial", ("fast",)),
    _("numpy_financial:pv", args(0.05 / 12, 120, -100.0, 15692.93), "numpy-financial"),
    _("numpy_financial:pmt", args(0.05 / 12, 360, 200000.0), "numpy-financial", ("fast",)),
    _("numpy_financial:nper", args(0.07 / 12, -150.0, 8000.0), "numpy-financial"),
    _("numpy_financial:ipmt", lambda r: ((0.1 / 12, np.arange(1, 25), 24, 2000.0), {}), "numpy-financial"),
    _("numpy_financial:ppmt", lambda r: ((0.1 / 12, np.arange(1, 25), 24, 2000.0), {}), "numpy-financial"),
    _("numpy_financial:npv", lambda r: ((0.08, np.array([-40000.0, 5000, 8000, 12000, 30000])), {}), "numpy-financial"),
    _("numpy_financial:mirr", lambda r: ((np.array([-4500.0, -800, 800, 800, 600, 600, 800, 800, 700, 3000]), 0.08, 0.055), {}), "numpy-financial"),
    _("numpy_financial:rate", args(10, 0.0, -3500.0, 10000.0), "numpy-financial", ("fast",)),
    _("numpy_financial:irr", lambda r: ((np.array([-100.0, 39, 59, 55, 20]),), {}), "numpy-financial"),
    # ---------------------------------------------------------------- pyswarms: optimisation test functions
    *[_(f"pyswarms.utils.functions.single_obj:{name}", particles(scale=s), "pyswarms", ("fast",) if name == "sphere" else ())
      for name, s in [("ackley", 30.0), ("beale", 4.0), ("booth", 10.0), ("crossintray", 10.0),
                      ("easom", 100.0), ("eggholder", 500.0), ("goldstein", 2.0), ("himmelblau", 5.0),
                      ("holdertable", 10.0), ("levi", 10.0), ("matyas", 10.0), ("rastrigin", 5.0),
                      ("rosenbrock", 2.0), ("schaffer2", 100.0), ("sphere", 10.0), ("threehump", 5.0)]],
    # Bukin N. 6 is defined on x in [-15, -5], y in [-3, 3] (and raises ValueError outside)
    _("pyswarms.utils.functions.single_obj:bukin6",
      lambda r: ((np.column_stack([r.uniform(-15, -5, 200), r.uniform(-3, 3, 200)]),), {}), "pyswarms"),
    # ---------------------------------------------------------------- scikit-fuzzy: membership functions
    _("skfuzzy:trimf", lambda r: ((np.linspace(0, 10, 200), np.array([2.0, 5.0, 8.0])), {}), "scikit-fuzzy", ("fast",)),
    _("skfuzzy:trapmf", lambda r: ((np.linspace(0, 10, 200), np.array([1.0, 3.0, 6.0, 9.0])), {}), "scikit-fuzzy"),
    _("skfuzzy:gaussmf", lambda r: ((np.linspace(0, 10, 200), 5.0, 1.5), {}), "scikit-fuzzy", ("fast",)),
    _("skfuzzy:gauss2mf", lambda r: ((np.linspace(0, 10, 200), 3.0, 1.0, 7.0, 2.0), {}), "scikit-fuzzy"),
    _("skfuzzy:gbellmf", lambda r: ((np.linspace(0, 10, 200), 2.0, 4.0, 5.0), {}), "scikit-fuzzy"),
    _("skfuzzy:sigmf", lambda r: ((np.linspace(0, 10, 200), 5.0, 2.0), {}), "scikit-fuzzy"),
    _("skfuzzy:dsigmf", lambda r: ((np.linspace(0, 10, 200), 3.0, 2.0, 7.0, 2.0), {}), "scikit-fuzzy"),
    _("skfuzzy:psigmf", lambda r: ((np.linspace(0, 10, 200), 3.0, 2.0, 7.0, -2.0), {}), "scikit-fuzzy"),
    _("skfuzzy:pimf", lambda r: ((np.linspace(0, 10, 200), 1.0, 4.0, 5.0, 10.0), {}), "scikit-fuzzy"),
    _("skfuzzy:smf", lambda r: ((np.linspace(0, 10, 200), 1.0, 8.0), {}), "scikit-fuzzy"),
    _("skfuzzy:zmf", lambda r: ((np.linspace(0, 10, 200), 1.0, 8.0), {}), "scikit-fuzzy"),
    _("skfuzzy:piecemf", lambda r: ((np.linspace(0, 10, 200), [2.0, 5.0, 8.0]), {}), "scikit-fuzzy"),
    _("skfuzzy:centroid", lambda r: ((np.linspace(0, 10, 200), np.exp(-np.linspace(-3, 3, 200) ** 2)), {}), "scikit-fuzzy"),
    _("skfuzzy:defuzz", lambda r: ((np.linspace(0, 10, 200), np.exp(-np.linspace(-3, 3, 200) ** 2), "mom"), {}), "scikit-fuzzy"),
    _("skfuzzy:fuzzy_and", lambda r: ((np.linspace(0, 10, 50), r.random(50), np.linspace(0, 10, 50), r.random(50)), {}), "scikit-fuzzy"),
    # ---------------------------------------------------------------- SciPy: distances (pure NumPy)
    *[_(f"scipy.spatial.distance:{name}", vec2(200, positive=pos), "scipy", ("fast",) if name == "braycurtis" else ())
      for name, pos in [("braycurtis", True), ("canberra", True), ("chebyshev", False), ("cityblock", False),
                        ("correlation", False), ("cosine", False), ("euclidean", False), ("jensenshannon", True),
                        ("minkowski", False), ("sqeuclidean", False)]],
    _("scipy.spatial.distance:seuclidean", lambda r: ((r.random(50), r.random(50), r.random(50) + 0.5), {}), "scipy"),
    _("scipy.spatial.distance:mahalanobis", lambda r: ((r.random(5), r.random(5), np.eye(5) * 2.0), {}), "scipy"),
    _("scipy.spatial.distance:hamming", lambda r: ((r.integers(0, 2, 100), r.integers(0, 2, 100)), {}), "scipy"),
    # ---------------------------------------------------------------- SciPy: through np.fft
    _("scipy.linalg:solve_circulant", lambda r: ((r.standard_normal(100) + np.eye(100)[0] * 30, r.standard_normal(100)),
                                                 {}), "scipy"),
    # ---------------------------------------------------------------- SciPy: windows (static length)
    *[_(f"scipy.signal.windows:{name}", args(*a), "scipy", ("fast",) if name == "hann" else ())
      for name, a in [("hann", (64,)), ("hamming", (64,)), ("blackman", (64,)), ("bartlett", (64,)),
                      ("cosine", (64,)), ("triang", (64,)), ("gaussian", (64, 7.0)), ("tukey", (64, 0.5)),
                      ("exponential", (64,)), ("general_hamming", (64, 0.7)), ("parzen", (64,)), ("bohman", (64,))]],
    # ---------------------------------------------------------------- filterpy
    _("filterpy.kalman:predict", lambda r: ((r.random(4), np.eye(4), np.eye(4) + 0.1, np.eye(4) * 0.01), {}), "filterpy"),
    _("filterpy.kalman:update", lambda r: ((r.random(4), np.eye(4), r.random(2), np.eye(2) * 0.5, np.eye(2, 4)), {}), "filterpy"),
    _("filterpy.stats:gaussian", lambda r: ((r.standard_normal(100), 0.0, 2.0), {}), "filterpy"),
    _("filterpy.common:Q_discrete_white_noise", args(3, 0.1, 2.0), "filterpy"),
    _("filterpy.common:kinematic_state_transition", args(2, 0.1), "filterpy"),
    # ---------------------------------------------------------------- scikit-image / scikit-learn
    _("skimage.color:rgb2gray", lambda r: ((r.random((64, 64, 3)),), {}), "scikit-image"),
    _("skimage.exposure:rescale_intensity", lambda r: ((r.random((64, 64)) * 3.0,), {}), "scikit-image"),
    _("skimage.exposure:adjust_gamma", lambda r: ((r.random((64, 64)), 2.0), {}), "scikit-image"),
    _("skimage.exposure:adjust_sigmoid", lambda r: ((r.random((64, 64)),), {}), "scikit-image"),
    _("skimage.exposure:adjust_log", lambda r: ((r.random((64, 64)),), {}), "scikit-image"),
    _("skimage.util:img_as_float", lambda r: ((r.random((32, 32)).astype(np.float32),), {}), "scikit-image"),
    *[_(f"skimage.color:{name}", lambda r: ((r.random((16, 20, 3)),), {}), "scikit-image")
      for name in ("hsv2rgb", "rgb2xyz", "rgb2lab", "rgb2ycbcr", "rgb2yuv")],
    _("skimage.exposure:equalize_hist", lambda r: ((r.random((32, 40)),), {}), "scikit-image"),
    *[_(f"skimage.filters:{name}", lambda r: ((r.random((32, 40)),), {}), "scikit-image")
      for name in ("threshold_otsu", "threshold_yen", "threshold_mean")],
    *[_(f"skimage.metrics:{name}", lambda r: ((lambda a: (a, a * 0.9))(r.random((32, 40))), {}), "scikit-image")
      for name in ("mean_squared_error", "normalized_root_mse", "peak_signal_noise_ratio")],
    _("skimage.util:img_as_ubyte", lambda r: ((r.random((32, 40)),), {}), "scikit-image"),   # next(genexp)
    _("skimage.util:invert", lambda r: ((r.random((32, 40)),), {}), "scikit-image"),
    _("scipy.integrate:simpson", vec(200), "scipy"),                    # a list item at an int argument
    _("scipy.integrate:cumulative_trapezoid", vec(200), "scipy"),       # a relative import in a helper
    _("scipy.special:softmax", lambda r: ((r.random((30, 5)),), {}), "scipy"),
    _("sklearn.utils.extmath:cartesian", args([np.arange(3), np.arange(4)]), "scikit-learn"),
    _("sklearn.metrics:mean_squared_error", vec2(), "scikit-learn"),
    _("sklearn.metrics:r2_score", vec2(), "scikit-learn"),
    _("sklearn.metrics.pairwise:euclidean_distances", lambda r: ((r.random((30, 5)), r.random((20, 5))), {}), "scikit-learn"),
    _("sklearn.metrics.pairwise:rbf_kernel", lambda r: ((r.random((30, 5)), r.random((20, 5))), {}), "scikit-learn"),
    _("sklearn.utils.extmath:softmax", lambda r: ((r.random((30, 5)),), {}), "scikit-learn"),
    _("sklearn.utils.extmath:row_norms", lambda r: ((r.random((30, 5)),), {}), "scikit-learn"),
]
