"""Label aggregation: votes matrix in, one (soft) label per task out.

The votes matrix is ``X``: tasks are samples (rows), workers are features
(columns), the way :class:`~sklearn.mixture.GaussianMixture` treats its data.

- :class:`MajorityVote`: majority vote, naive soft labels (vote frequencies).
- :class:`DawidSkene`: a confusion matrix per worker, MAP EM in log space.
- :class:`WeightedDawidSkene`: votes weighted by the Dawid-Skene diagonals.
- :class:`GLAD`: worker abilities and task difficulties.
- :class:`OneCoinDawidSkene`: one accuracy per worker, its Beta prior fitted to the crowd.
- :class:`MACE`: workers who know the answer or spam (Hovy et al., 2013), variational Bayes.
- :class:`Wawa`, :class:`ZeroBasedSkill`, :class:`KOS`, :class:`MMSR`: weighted majority votes
  whose worker weights come from agreement with the aggregate, message passing (binary) or a
  robust rank-one completion of the workers' agreement matrix.
- :class:`BayesianDawidSkene`: Bayesian confusion matrices with a prior learned from the crowd.
- :class:`EBCC`: classes with subtypes (correlated workers), variational Bayes.
- :class:`GroupedDawidSkene`: Dawid-Skene with groups of correlated workers (model
  annotators) that count as the evidence of one reading per group.
- :class:`MeanRating`, :class:`MedianRating`, :class:`BiasPrecisionEM`, :class:`CATD`,
  :class:`CensoredRatingEM` (ratings at the floor or ceiling censored): continuous ratings (a
  float votes matrix) aggregated into one value per task, as scikit-learn regressors (``score``
  is R^2 against gold ratings).
- :class:`OrdinalDawidSkene`: ordinal grades; Dawid-Skene with each worker's confusion matrix
  drawn towards a latent-score model (a bias and a noise per worker).
- :class:`AggregatorSelector`: the candidate that best predicts held-out votes (no gold); the
  aggregator to use on a crowd you do not know.

The EM aggregators share one driver (``_em.BaseEM``) and per-block kernels
(:mod:`skcrowd.aggregation.kernels`, one module per model), compiled with numba when it is
installed (extra ``fast``), with a numpy/scipy fallback that gives the same results
(``kernels.ENGINE`` chooses).
"""

from ._bayesian_dawid_skene import BayesianDawidSkene
from ._censored import CensoredRatingEM
from ._continuous import CATD, BiasPrecisionEM, MeanRating, MedianRating, check_ratings
from ._dawid_skene import DawidSkene, WeightedDawidSkene
from ._ebcc import EBCC
from ._glad import GLAD
from ._grouped import GroupedDawidSkene
from ._kos import KOS
from ._mace import MACE
from ._majority import MajorityVote
from ._mmsr import MMSR
from ._ordinal import OrdinalDawidSkene
from ._one_coin import OneCoinDawidSkene
from ._selection import AggregatorSelector
from ._wawa import Wawa
from ._zero_based_skill import ZeroBasedSkill

__all__ = ["MajorityVote", "DawidSkene", "WeightedDawidSkene", "GLAD"]
__all__ += ["OneCoinDawidSkene", "MACE"]  # EM / variational Bayes
__all__ += ["Wawa", "ZeroBasedSkill", "KOS", "MMSR"]  # weighted votes, not EM-shaped
__all__ += ["BayesianDawidSkene", "EBCC"]
__all__ += ["AggregatorSelector"]  # a meta-estimator over the models above
# continuous ratings: regressors (skcrowd.utils.discovery.all_estimators(type_filter="rating"))
__all__ += ["MeanRating", "MedianRating", "BiasPrecisionEM", "CATD", "CensoredRatingEM",
            "check_ratings"]
__all__ += ["OrdinalDawidSkene"]  # ordinal grades (issue 27)
__all__ += ["GroupedDawidSkene"]  # groups of correlated workers, model annotators (issue 39)
