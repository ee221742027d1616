"""Topics: HDBSCAN clusters of chunk embeddings, their centroids, identities and labels.

Pure algorithms over numpy arrays and texts; reading vectors and writing clusters is the store's
business, and wiring the two together is the ingest and maintenance code's.

- ``density``: :func:`cluster_vectors`, scikit-learn's HDBSCAN fed a sparse neighbour graph so that
  tens of thousands of vectors cluster in seconds, and ``join_noise``: a vector HDBSCAN left as noise
  joins the cluster most of its nearest vectors are in.
- ``geometry``: angular distance, :func:`centroids`, and :func:`assign_new` for the vectors that
  arrive between two full reclusters (nearest centroid, within a bar from that cluster's own spread:
  :func:`join_bars`; else noise).
- ``identity``: :func:`carry_over`, which new cluster continues which old one (majority, one-to-one).
- ``labels``: offline labels, a few distinctive terms per cluster by class-based TF-IDF.

Importing this package is cheap: numpy, scipy and scikit-learn load inside the functions.
scikit-learn (with scipy, 190 MB) is the optional ``topics`` extra, so a default install stays small:
:func:`topics_available` says whether it is there, and callers skip topics without it.
"""

import importlib.util

# The extra by the project's name works however Causantic was installed: from a package, or from a
# clone (pip finds causantic installed and adds what the extra needs); '.[topics]' only in a clone.
TOPICS_INSTALL = "pip install 'causantic[topics]'"
TOPICS_HINT = (
    "Topics need scikit-learn, which the default install leaves out (with scipy, 190 MB): "
    f"add it with `{TOPICS_INSTALL}` in the environment Causantic is installed in."
)


def topics_available() -> bool:
    """Whether scikit-learn can be imported (checked without importing it: that costs ~2 s)."""
    return importlib.util.find_spec("sklearn") is not None


from causantic.cluster.density import cluster_vectors  # noqa: E402
from causantic.cluster.geometry import (  # noqa: E402
    NOISE,
    angular_distances,
    assign_new,
    centroids,
    join_bars,
    normalise,
)
from causantic.cluster.identity import carry_over  # noqa: E402
from causantic.cluster.labels import (  # noqa: E402
    STEADY_TERMS,
    distinct_labels,
    scored_terms,
    steady_label,
    tokenize,
)

__all__ = [
    "NOISE",
    "STEADY_TERMS",
    "TOPICS_HINT",
    "TOPICS_INSTALL",
    "angular_distances",
    "assign_new",
    "carry_over",
    "centroids",
    "distinct_labels",
    "cluster_vectors",
    "join_bars",
    "normalise",
    "scored_terms",
    "steady_label",
    "tokenize",
    "topics_available",
]
