"""The public crowds skcrowd fetches: their pinned source files, converters and descriptions.

Every source file is pinned to a commit of the public git repository that
publishes it, with its size and sha256 (the table ``SOURCES.tsv`` of the
project's shared data, copied here). :data:`DATASETS` lists one
:class:`CrowdDataset` per crowd, named as in that table (the snow2008 archive
holds three crowds: ``snow2008_rte``, ``snow2008_temp``, ``snow2008_wsd``).

``counts`` are those the converter produced from the pinned files, recorded
so that :func:`~skcrowd.datasets.list_crowd_datasets` works offline (a test
converts the files again and compares); None where the converter has not
been run on the real files yet.

Some crowds are not classification crowds (``kind``): regression crowds
(``movie_reviews_rodrigues`` and the seven affect ratings of the snow2008 archive,
``snow2008_anger`` ... ``snow2008_valence``) and a sequence-labelling crowd
(``conll2003_ner_mturk``), and an ordinal crowd (``metaphor_novelty_parde``:
grades 0-3, votes as class indices whose order is the grades'). Their converters
(``skcrowd.datasets._structured``) return the Bunch itself, converted in memory
at each load: skcrowd's folder layout holds nominal class votes only. A dataset
pinned before skcrowd can convert it has ``convert=None``: its files are
listed, sized and checked like the others, and
:func:`~skcrowd.datasets.fetch_crowd_dataset` says that its converter is not
written yet (none at present).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Callable, NamedTuple

from ._converters import (
    convert_act,
    convert_labelme,
    convert_music,
    convert_sentiment_polarity,
    convert_snow2008,
    convert_zhang2014,
    convert_zheng,
)
from ._download import RemoteFile
from ._structured import (CROWDSPEECH_SPLITS, SNOW2008_AFFECTS, convert_conll2003_ner,
                          convert_crowdspeech, convert_metaphor_novelty, convert_movie_reviews,
                          convert_reading_level, convert_snow2008_affect)

__all__ = ["CrowdDataset", "Counts", "COUNTS", "DATASETS"]

# ---------------------------------------------------------------------------
# Pinned source files: {dataset: (repository, folder, ((file, bytes, sha256), ...))}
# ---------------------------------------------------------------------------

_COMMITS = {
    "fmenat/PyLearningCrowds": "0edf617d0357a43b48dc53f10f4181ec0163d4db",
    "shahanaibrahimosu/end-to-end-crowdsourcing": "35c01c53e27eb0580648bc2b4142ad368e03882e",
    "zhangyuc/SpectralMethodsMeetEM": "1397f5a6c2c9bb1690cd43228e6966269edd6e4f",
    "orchidproject/active-crowd-toolkit": "2c0c194e85ca126545bd830d811ec39151bdd448",
    "zhydhkcws/crowd_truth_infer": "6dfcd829267d291b035405898b9a407e8a366241",
    "maifulmax/TIN-model": "c57de9f2f180c6995a46960cfe145c84f73c3a42",
    "edwinrobots/bayesian_combination_tutorial2": "8ac4cbb6b2cc66d25828015caf31c21710e3f3e9",
    "fmpr/MA-sLDAr": "c1bb161a5cd89a260f47b9899950e6cd59379ba4",
    "thanhan/seqcrowd-acl17": "2a8a86f9ab4121d16b5abe5437bc764d306b87ae",
    "natalieparde/label-aggregation": "148871ce97df2ae19d66f32e848373459037a5e0",
    "tao-j/hra": "995a2439ffebc77fceb969972b8e475a1fc32c8b",
    "pilot7747/VoxDIY": "1fca2fb4a0a9d1b6db4e738d77df4a6216f85f19",
}
_SOURCES = {
    "labelme": (
        "fmenat/PyLearningCrowds", "data/LabelMe/", (
            ("answers.txt", 174453,
             "354c282e10835a59962494acb1d180fe997b65a0aa1e27f870cdb4ef51ef3e2b"),
            ("LabelMe_VGG_avg_train.npy", 2048128,
             "0ddfbcbd722aab70e81525a459cc37d47c1d344322b401ee35a3e9b158a209e8"),
            ("LabelMe_VGG_avg_valid.npy", 1024128,
             "cb80ce99ef9fc80c666e6b9c43259ee0aac4e0cf82f8ac654b8bb309fb28953d"),
            ("LabelMe_VGG_avg_test.npy", 2433152,
             "af407538f702f98e775f233652152cdcb58583c9d4668492308151c126ce7873"),
            ("LabelMe_Z_train.txt", 2000,
             "229556bdc5da327dd7d4e4154ba180969091c83f43cf8cbee3727131c5a062f6"),
            ("LabelMe_Z_valid.txt", 1000,
             "40aba43f903a539b38243c411e214da1f8c696cc47aa59811cc3388cc6899892"),
            ("LabelMe_Z_test.txt", 2376,
             "6d508b638d41fa84b2628615270456df96a49dce18054d201ac6261b03ea77bc"),
        ),
    ),
    "sentiment_polarity": (
        "fmenat/PyLearningCrowds", "data/Sentiment/", (
            ("answers.txt", 3016645,
             "fb39e4103f326a2798e5a6b7eeb1840beceb2e826a619cc19089c6a24041f82a"),
            ("Sentiment_Z_train.txt", 9998,
             "623ca5a651273e491bbdc39e8a49909323c15df20468780db1b26dd520ed399c"),
            ("Sentiment_Z_test.txt", 7998,
             "261d1edd1bfe337c1d3d62f0df28cedc679e00bce9d6b53f46aa8cce7374b0fd"),
            ("Sentiment_text_train.txt", 580840,
             "bec8026c384e895f48c18e728519aa4dd3f4a362da656623e15d40470def716d"),
            ("Sentiment_text_test.txt", 201275,
             "2da4301784fc621df456c7ece19b1a7f9df2d0735a81d32ffb6f04ebaaf094cd"),
        ),
    ),
    "music": (
        "shahanaibrahimosu/end-to-end-crowdsourcing", "data/Music/", (
            ("music_genre_mturk.csv", 3413459,
             "20abf70b06d77653742125d8ae57a6b46d3e6d5e0291de4fc9c76d433cd9b834"),
            ("music_genre_gold.csv", 802222,
             "28cd73e9bf555e5847de0b0fc4c4998264d4a272d657c452edf2c93c206bda64"),
            ("music_genre_test.csv", 344469,
             "952b423483bef4e0aa38b628815232b600a745d028fc8dfe8addd49e616931b8"),
            ("mturk_answers.csv", 128731,
             "07c7485ca27f7a0ab69e4dd014d329644a495e4dda498970b65ed1a173f0606a"),
        ),
    ),
    "zhang2014_bluebird": (
        "zhangyuc/SpectralMethodsMeetEM", "src/", (
            ("bluebird_crowd.txt", 36934,
             "a63231e23dc02d0873d76669684812f9bad53a73f0580f43f4295175987f347e"),
            ("bluebird_truth.txt", 646,
             "690660bf75f24d052bec3bb55bb8dc5f7ebdadbaf36de5db9a031221f2db2ce3"),
        ),
    ),
    "zhang2014_dog": (
        "zhangyuc/SpectralMethodsMeetEM", "src/", (
            ("dog_crowd.txt", 70284,
             "1b5c88e0e6c08b8bcfb27be2c43093af06a0d649edc6a65ad719d5204b894b24"),
            ("dog_truth.txt", 47340,
             "e1378e027b6e51b664b0c75a61e638d71bbede890cd4af2a2c4dae3718596d24"),
        ),
    ),
    "zhang2014_rte": (
        "zhangyuc/SpectralMethodsMeetEM", "src/", (
            ("rte_crowd.txt", 69560,
             "a51b7a607587accf7800895a8f0c005eaac28a23fbac6524432666960c5673e2"),
            ("rte_truth.txt", 4692,
             "0782ff14373c7fe3b2c652d0cc6b768512ed9edc718e2dcf790426c3045430a1"),
        ),
    ),
    "zhang2014_trec": (
        "zhangyuc/SpectralMethodsMeetEM", "src/", (
            ("trec_crowd.txt", 959028,
             "821141b1e95b1ff516ebccf6869f2ac88ca93035d6991b8039d76275866de402"),
            ("trec_truth.txt", 16833,
             "405b4ff78e79b912252f19ff68116e71abe3a21c2051c7c701e7a16acbeae3e4"),
        ),
    ),
    "zhang2014_web": (
        "zhangyuc/SpectralMethodsMeetEM", "src/", (
            ("web_crowd.txt", 160023,
             "5b1ad44cebdcf59d42c83393a7dc3f4aa46746f5428c4caac275350247da6d6f"),
            ("web_truth.txt", 20124,
             "7ff13173d6ad447e6959fa5226bcbef756ebe34d712eae908de30036824fc94f"),
        ),
    ),
    "act_CF": (
        "orchidproject/active-crowd-toolkit", "Data/", (
            ("CF.csv", 29989,
             "18bc4dc1780ce1f2b2f9ffedc493f4b8f9a4590a3fde8dce2e5d3367bcc8686e"),
        ),
    ),
    "act_CF_amt": (
        "orchidproject/active-crowd-toolkit", "Data/", (
            ("CF_amt.csv", 182225,
             "c44d4bf3cbf08f343072d86a10e9085ab91885a2b4bbb1d0d03eb2cd461f6c5b"),
        ),
    ),
    "act_MS": (
        "orchidproject/active-crowd-toolkit", "Data/", (
            ("MS.csv", 103419,
             "fb9e0b146723c93dac71d1ed601a736cf94fed3b444f4921d6c4e57b4505c06a"),
        ),
    ),
    "act_SP": (
        "orchidproject/active-crowd-toolkit", "Data/", (
            ("SP.csv", 655310,
             "a83cf48092dc61bbb8986fdb0c1a17f658ba8555bddffc9e9ca26b95d514236f"),
        ),
    ),
    "act_SP_amt": (
        "orchidproject/active-crowd-toolkit", "Data/", (
            ("SP_amt.csv", 262246,
             "fec6f3027202d33016b8b06083c83118d6d237e671b8bd4c22d0aa979e41ba0a"),
        ),
    ),
    "act_ZenCrowd_all": (
        "orchidproject/active-crowd-toolkit", "Data/", (
            ("ZenCrowd_all.csv", 1645473,
             "88dff5161ab4c13951ef7c211745eca8a602884f75be55085aec44beda005ca9"),
        ),
    ),
    "act_ZenCrowd_in": (
        "orchidproject/active-crowd-toolkit", "Data/", (
            ("ZenCrowd_in.csv", 846125,
             "c5eabf0b145ce04122a77e28e3d765045ba65c3b16edee2dc0c5106418e92f5a"),
        ),
    ),
    "act_ZenCrowd_us": (
        "orchidproject/active-crowd-toolkit", "Data/", (
            ("ZenCrowd_us.csv", 925390,
             "e64c95ba430ea42b69a7ffec64b12ed2d844b9403fd053f7a28df2494cfa1b10"),
        ),
    ),
    "zheng_d_Duck_Identification": (
        "zhydhkcws/crowd_truth_infer", "datasets/d_Duck Identification/", (
            ("answer.csv", 58020,
             "0d5e423652c079361a4cbc0adbee0945d40f02a9dedcfb6b068e8f2af63b24f0"),
            ("truth.csv", 988,
             "04c6d8b6cdc298b63c05dc87d28ceebd018d4207e0ced7c1229ca3593a74983a"),
        ),
    ),
    "zheng_d_jn_product": (
        "zhydhkcws/crowd_truth_infer", "datasets/d_jn-product/", (
            ("answer.csv", 691172,
             "ca69e3f2cba3d6f9c3b3ecc2f8d2a81afcd747d0b91aa5ab18608a5715e26adc"),
            ("truth.csv", 108084,
             "9a5757c726ef1a32b05f6a675924c483b24d602c61b1a2d087ab3d84f90b3766"),
        ),
    ),
    "zheng_s4_Dog_data": (
        "zhydhkcws/crowd_truth_infer", "datasets/s4_Dog data/", (
            ("answer.csv", 78378,
             "db11159198f59fa2af87450b008f860ca2e9e04e3f15c697ef254af40fb6763a"),
            ("truth.csv", 5557,
             "2a641fa31e80526164d956da4228f80d31b303c2691ab1855c76fef72d04b746"),
        ),
    ),
    "zheng_s4_Face_Sentiment_Identification": (
        "zhydhkcws/crowd_truth_infer", "datasets/s4_Face Sentiment Identification/", (
            ("answer.csv", 111830,
             "9e98c7c56ea1967ca9d3e2396b9abd469e96ee47a52a0103c917397adbb98f9b"),
            ("truth.csv", 3996,
             "c324c79fd7196d16cb638d956ec90209e405b0010741ffb5ecb1b6316f48cc4c"),
        ),
    ),
    "zheng_d_sentiment": (
        "maifulmax/TIN-model", "datasets/d_sentiment/", (
            ("answer.csv", 432518,
             "8f4006278ca288a8d73a20cc37348f71b201f1bcb471a9aacd80421d8a34be26"),
            ("truth.csv", 6899,
             "bac9bebdfdcbc5227cee6f95e27754f1089421e39317df54b9e2680bc78d9976"),
        ),
    ),
    "zheng_s4_Relevance": (
        "maifulmax/TIN-model", "datasets/s4_Relevance/", (
            ("answer.csv", 3920259,
             "a5dd7a79e491d119234d12be81d2ff7b0a93310362ed694adaeffafee48cc38d"),
            ("truth.csv", 156044,
             "1ebae4ae9f6b146d55f398cf488077172c52d45e6c7d5c4bd95b29934f30e013"),
        ),
    ),
    "zheng_s5_AdultContent": (
        "maifulmax/TIN-model", "datasets/s5_AdultContent/", (
            ("answer.csv", 3685097,
             "7615fa2f2fccf2a6ed1c07896f1bf764dba550da8ca841d9847240e6096cd893"),
            ("truth.csv", 63772,
             "7823e02850fdab752b79e0c1e9b84e71ccc038c6b21f85b90208f9962d7831eb"),
        ),
    ),
    "snow2008": (
        "edwinrobots/bayesian_combination_tutorial2",
        "snow2008_mturk_data_with_orig_files_assembled_201904/", (
            ("all_collected_data.tgz", 145872,
             "158786ca0caa0b668439d3381d1bacbffd5f7cbc29bfd0eb33f575ff14d64c73"),
        ),
    ),
    # not classification crowds (kind="regression", "sequence" below)
    "movie_reviews_rodrigues": (
        "fmpr/MA-sLDAr", "MovieReviews/", (
            ("answers.txt", 1980361,
             "9c82c808a80529df0f5e9269cb68dae9b55f96a13a9fa47257fde6fb9091d423"),
            ("data_train_amt.txt", 1300367,
             "6cf30515bbb071cf978a23b5494da7c09a9ac27681ab46f09124829941323b16"),
            ("labels_train_amt.txt", 6210,
             "298a85a454a3c08c1e88ce7503b66309857be6c267bcf753503631d893f0b7e5"),
            ("data_test.txt", 2976302,
             "4b561a2e300acfd54b8fbb0134b9158e430eb2e5ce871aa87ecc2a52824cce4a"),
            ("labels_test.txt", 14507,
             "1cbe2e3b037b42c2bf6eb4a004fb1a34b2cfeaa8f8189c988025ae9096b01c99"),
        ),
    ),
    "conll2003_ner_mturk": (
        "thanhan/seqcrowd-acl17", "", (
            ("task1.zip", 2148104,
             "bee337089cd5ee776f475b50aef7fd670155909c02d0cd360db602ec9e82e10d"),
        ),
    ),
    # an ordinal crowd (kind="ordinal" below)
    "metaphor_novelty_parde": (
        "natalieparde/label-aggregation", "feature_extraction/sample_input/", (
            ("anonymized_combined_hits_1-100.csv", 482760,
             "fb92a6c4c6bcd1e1f39830361f0b51066040dd6a05c1512bb7c729f9cedf0735"),
            ("expert_combined_hits_1-100.csv", 89947,
             "dc58d409a495c3f3e8e5b8856bf6aacce234c0c103ac53ebc1059682cbcc76a1"),
        ),
    ),
    # a pairwise crowd (kind="pairwise") and transcriptions (kind="text", issue 38)
    "readinglevel_chen2013": (
        "tao-j/hra", "matlab/data/readinglevel/", (
            ("all_pair.txt", 140747,
             "11af21ced2ed75edbd63e4ad6312bcf4203797e93bef449bef8e6ffae2cc8369"),
            ("doc_info.txt", 2884,
             "f2b5c055fbf0ee32f910e9c64f77ef2252559d9c9d485bf717d3d978010dc835"),
        ),
    ),
    **{f"crowdspeech_{split}": ("pilot7747/VoxDIY", "data/", (
        (f"crowdspeech-{split}-crowd.tsv", crowd_bytes, crowd_sha),
        (f"crowdspeech-{split}-gt.txt", gt_bytes, gt_sha),
    )) for split, crowd_bytes, crowd_sha, gt_bytes, gt_sha in (
        ("dev-clean", 3469829, "1f4f71afab68528d45c58a3292f7246ba7e7b82c1c0d35e7a6ebd955eaf0e8cb",
         490070, "a57b56c235f206ec208379f10cc42234ab306fbd2c2df8de485253d7074dc67d"),
        ("dev-other", 3356749, "25985223d43eb2108ba0b30bfb83b53ab13e8befdece1c57af56ab991e382cf7",
         479640, "8014ff4cea0e92dce77790d33f2ba537a5aeb5ad4ccbe16df862e15c246e45c4"),
        ("test-clean", 3364479, "7ad3834d014ac46eded1dbb574872398bc93b532208f7df2e73eaab0ffceb77c",
         479539, "c8fffc106d66792737c4789817be5089eccbd81df794f862392ed895824e7a14"),
        ("test-other", 3463680, "fc63b0b099eca0dd5d131ece1c55fa0acfb6dd2b7a42b82074ddc55fffecfc70",
         495011, "cb41e33548d8347cffa3c917c4d60dce43549687e322b3fd0bb328c7f8214c48"),
    )},
}


class Counts(NamedTuple):
    """Counts of a converted crowd (see :func:`~skcrowd.datasets.list_crowd_datasets`).

    For a regression crowd ``classes`` and ``mv_accuracy`` are None; for a
    sequence-labelling crowd the tasks are the sentences of the training
    split, ``votes`` the sentences a worker tagged, ``classes`` the tags.
    """

    tasks: int
    workers: int
    classes: int
    votes: int
    gold: int
    duplicates: int
    mv_accuracy: float


#: Counts of the converted crowds: (tasks, workers, classes, votes, gold, duplicates dropped,
#: majority-vote accuracy on gold with ties as a uniform pick), from the pinned files.
COUNTS = {
    "labelme": Counts(1000, 59, 8, 2547, 1000, 0, 0.766),
    "sentiment_polarity": Counts(4999, 203, 2, 27746, 4999, 0, 0.8859),
    "zhang2014_bluebird": Counts(108, 39, 2, 4212, 108, 0, 0.7593),
    "zhang2014_dog": Counts(807, 109, 4, 8070, 807, 0, 0.8222),
    "zhang2014_rte": Counts(800, 164, 2, 8000, 800, 0, 0.8969),
    "zhang2014_trec": Counts(19033, 762, 2, 88385, 2275, 0, 0.6514),
    "zhang2014_web": Counts(2665, 177, 5, 15567, 2653, 0, 0.7307),
    "act_CF": Counts(300, 461, 5, 1720, 300, 0, 0.8822),
    "act_CF_amt": Counts(300, 110, 5, 6025, 300, 5, 0.8533),
    "act_SP": Counts(4999, 203, 2, 27746, 4999, 0, 0.8859),
    "act_SP_amt": Counts(500, 143, 2, 10000, 500, 0, 0.943),
    "act_ZenCrowd_all": Counts(2040, 78, 2, 20125, 2040, 1730, 0.8292),
    "act_ZenCrowd_in": Counts(2040, 25, 2, 10495, 2040, 710, 0.74),
    "act_ZenCrowd_us": Counts(2040, 74, 2, 11155, 2040, 1035, 0.8605),
    "zheng_d_Duck_Identification": Counts(108, 39, 2, 4212, 108, 0, 0.7593),
    "zheng_d_jn_product": Counts(8315, 176, 2, 24945, 8315, 0, 0.8966),
    "zheng_d_sentiment": Counts(1000, 85, 2, 20000, 1000, 0, 0.9335),
    "zheng_s4_Dog_data": Counts(807, 109, 4, 8070, 807, 0, 0.8222),
    "zheng_s4_Face_Sentiment_Identification": Counts(584, 27, 4, 5242, 584, 0, 0.6367),
    "zheng_s4_Relevance": Counts(20232, 766, 4, 96883, 4460, 1570, 0.5424),
    "zheng_s5_AdultContent": Counts(11040, 825, 4, 89799, 333, 2922, 0.7583),
    "snow2008_rte": Counts(800, 164, 2, 8000, 800, 0, 0.8969),
    "snow2008_temp": Counts(462, 76, 2, 4620, 462, 0, 0.9361),
    "snow2008_wsd": Counts(177, 34, 3, 1770, 177, 0, 0.9944),
    "movie_reviews_rodrigues": Counts(1500, 135, None, 7440, 1500, 0, None),
    **{f"snow2008_{emotion}": Counts(100, 38, None, 1000, 100, 0, None)
       for emotion in SNOW2008_AFFECTS},
    "metaphor_novelty_parde": Counts(1938, 231, 4, 11598, 1938, 0, 0.5191),
    "conll2003_ner_mturk": Counts(2997, 47, 9, 11545, 2997, 0, None),
    # items, workers, comparisons, passages with a level, self-comparisons dropped
    "readinglevel_chen2013": Counts(490, 624, None, 12726, 490, 2, None),
    "crowdspeech_dev-clean": Counts(2703, 748, None, 18921, 2703, 0, None),
    "crowdspeech_dev-other": Counts(2864, 1353, None, 20048, 2864, 0, None),
    "crowdspeech_test-clean": Counts(2620, 769, None, 18340, 2620, 0, None),
    "crowdspeech_test-other": Counts(2939, 1441, None, 20573, 2939, 0, None),
}

_NO_LICENCE = "none stated with the pinned files (see the repository); cite the reference"


@dataclass(frozen=True)
class CrowdDataset:
    """A public crowd: where its files are, how they are converted, what they hold.

    ``convert`` takes ``{file name: local path}`` of the files it reads
    (``files``; None: every pinned file of ``source``) and returns a
    :class:`~skcrowd.datasets._folder.Crowd` (``kind`` "classification",
    written as a folder in skcrowd's layout), or the loaded Bunch itself
    (``kind`` "regression" or "sequence", see
    ``skcrowd.datasets._structured``); it is None for a dataset that is
    pinned but whose converter is not written yet (see :attr:`convertible`).
    ``same_as`` names another crowd of :data:`DATASETS` that holds the same
    votes, published separately (a benchmark should count them once).
    """

    name: str
    source: str
    convert: Callable | None
    title: str
    description: str
    reference: str
    features: str = "-"
    files: tuple | None = None
    same_as: str | None = None
    licence: str = _NO_LICENCE
    kind: str = "classification"

    @property
    def convertible(self):
        """Whether skcrowd converts the pinned files (False: its converter is not written yet)."""
        return self.convert is not None

    @property
    def counts(self):
        """The recorded :class:`Counts`, None if the converter has not run on the real files."""
        return COUNTS.get(self.name)

    @property
    def repository(self):
        return _SOURCES[self.source][0]

    @property
    def commit(self):
        return _COMMITS[self.repository]

    def remote_files(self):
        """The :class:`RemoteFile` of each file the converter reads."""
        repository, folder, files = _SOURCES[self.source]
        return tuple(
            RemoteFile(repository, self.commit, folder + name, size, sha256)
            for name, size, sha256 in files if self.files is None or name in self.files
        )

    def describe(self):
        """The dataset's description: the crowd, its source files, reference and licence."""
        files = ", ".join(f.path.rsplit("/", 1)[-1] for f in self.remote_files())
        same = f" {_SAME_AS.format(other=self.same_as)}" if self.same_as else ""
        pending = "" if self.convertible else f" {_NOT_CONVERTIBLE}"
        paragraphs = (
            self.title, self.description + same + pending,
            f"Source files: {files}, of github.com/{self.repository} at commit {self.commit}.",
            f"Reference: {self.reference}", f"Licence: {self.licence}.",
        )
        return "\n\n".join(textwrap.fill(p, 79) for p in paragraphs)


# ---------------------------------------------------------------------------
# The crowds
# ---------------------------------------------------------------------------

_ZHANG2014 = (
    "Y. Zhang, X. Chen, D. Zhou and M. I. Jordan. \"Spectral methods meet EM: a provably "
    "optimal algorithm for crowdsourcing\". NeurIPS, 2014."
)
_ZHANG2014_FORMAT = (
    "{prefix}_crowd.txt: one vote per line, 'task worker label', whitespace-separated positive "
    "integers (labels are class numbers 1 .. K; class index = label - 1). {prefix}_truth.txt: "
    "'task label' gold labels{truth}."
)
_ACT = (
    "M. Venanzi, O. Parson, A. Rogers and N. R. Jennings. \"The ActiveCrowdToolkit: an "
    "open-source tool for benchmarking active learning algorithms for crowdsourcing research\". "
    "HCOMP, 2015."
)
_ACT_FORMAT = (
    "{file}: one vote per line, no header, 'WorkerID,TaskID,WorkerLabel,GoldLabel' (a fifth "
    "field, where present, is the answer's duration in seconds, not read); the task's gold "
    "label is repeated on each of its rows (empty or negative: none). Ids are kept as strings; "
    "classes are the labels that occur."
)
_ZENCROWD = (
    " G. Demartini, D. E. Difallah and P. Cudre-Mauroux. \"ZenCrowd: leveraging probabilistic "
    "reasoning and crowdsourcing techniques for large-scale entity linking\". WWW, 2012."
)
_ZHENG2017 = (
    "Y. Zheng, G. Li, Y. Li, C. Shan and R. Cheng. \"Truth inference in crowdsourcing: is the "
    "problem solved?\". PVLDB 10(5), 2017."
)
_ZHENG_FORMAT = (
    "answer.csv: one vote per line, 'question,worker,answer' with a header; truth.csv: "
    "'question,truth' gold labels{truth}. Classes are the answers that occur, in id order."
)
_SNOW2008 = (
    "R. Snow, B. O'Connor, D. Jurafsky and A. Y. Ng. \"Cheap and fast - but is it good? "
    "Evaluating non-expert annotations for natural language tasks\". EMNLP, 2008."
)
_SNOW_FORMAT = (
    "all_collected_data.tgz holds one tab-separated '<task>.standardized.tsv' per task of the "
    "paper (7 affect ratings, word similarity, rte, temp, wsd); skcrowd reads {member} "
    "(columns !amt_annotation_ids, !amt_worker_ids, orig_id, response, gold: one row per vote, "
    "the item's gold label on each row), in memory, never extracted to disk."
)
_PYLEARNINGCROWDS = (
    "Copy in the PyLearningCrowds repository. answers.txt: a matrix with a row per task and a "
    "column per worker, whitespace-separated class indices, -1 where the worker did not vote. "
    "{prefix}_Z_{{split}}.txt: one gold class index per line."
)
_NOT_CONVERTIBLE = (
    "skcrowd cannot convert this dataset yet: its source files are pinned, but its converter is "
    "not written yet."
)
_SAME_AS = (
    "The same crowd as {other}, published separately: same counts, same votes and gold label "
    "per task, same number of votes per worker (ids renumbered)."
)


def _zhang(prefix, **kwargs):
    return CrowdDataset(
        name=f"zhang2014_{prefix}", source=f"zhang2014_{prefix}",
        convert=lambda paths: convert_zhang2014(paths[f"{prefix}_crowd.txt"],
                                                paths[f"{prefix}_truth.txt"]),
        reference=_ZHANG2014, **kwargs,
    )


def _act(code, *, more="", also_cite="", **kwargs):
    return CrowdDataset(
        name=f"act_{code}", source=f"act_{code}",
        convert=lambda paths: convert_act(paths[f"{code}.csv"]),
        description=_ACT_FORMAT.format(file=f"{code}.csv") + more,
        reference=_ACT + also_cite, **kwargs,
    )


def _zheng(name, **kwargs):
    return CrowdDataset(
        name=name, source=name,
        convert=lambda paths: convert_zheng(paths["answer.csv"], paths["truth.csv"]),
        reference=_ZHENG2017, **kwargs,
    )


def _snow(task, **kwargs):
    return CrowdDataset(
        name=f"snow2008_{task}", source="snow2008",
        convert=lambda paths: convert_snow2008(paths["all_collected_data.tgz"], task),
        reference=_SNOW2008, **kwargs,
    )


DATASETS = (
    CrowdDataset(
        name="labelme", source="labelme", convert=convert_labelme,
        title="LabelMe scene classification, crowd labels from Amazon Mechanical Turk.",
        description=(
            "1000 training images of 8 scene classes labelled by 59 workers (1 to 3 votes per "
            "image), all with gold labels; held-out validation (500) and test (1188) images "
            "with gold labels and no votes. Classes: highway, insidecity, tallbuilding, street, "
            "forest, coast, mountain, opencountry (class indices 0-7). Features: 512-d VGG16 "
            "features (global average pooling) of every image, float32, as data, data_valid "
            "and data_test. "
            + _PYLEARNINGCROWDS.format(prefix="LabelMe")
            + " LabelMe_VGG_avg_{split}.npy: the features (read without pickle)."
        ),
        reference=(
            "F. Rodrigues and F. C. Pereira. \"Deep learning from crowds\". AAAI, 2018. "
            "B. C. Russell, A. Torralba, K. P. Murphy and W. T. Freeman. \"LabelMe: a database "
            "and web-based tool for image annotation\". IJCV 77, 2008."
        ),
        features="512-d VGG16 (average-pooled); valid 500 and test 1188 images with gold",
    ),
    CrowdDataset(
        name="sentiment_polarity", source="sentiment_polarity",
        convert=convert_sentiment_polarity,
        title="Sentence sentiment polarity (movie reviews), crowd labels from Amazon "
              "Mechanical Turk.",
        description=(
            "4999 sentences of Rotten Tomatoes reviews labelled negative (0) or positive (1) by "
            "203 workers, all with gold labels; 3999 test sentences with gold labels and no "
            "votes. Features: the sentence text, a str array as data and data_test. "
            + _PYLEARNINGCROWDS.format(prefix="Sentiment")
            + " Sentiment_text_{split}.txt: one sentence per line."
        ),
        reference=(
            "F. Rodrigues, F. C. Pereira and B. Ribeiro. \"Learning from multiple annotators: "
            "distinguishing good from random labelers\". Pattern Recognition Letters 34(12), "
            "2013. B. Pang and L. Lee. \"Seeing stars: exploiting class relationships for "
            "sentiment categorization with respect to rating scales\". ACL, 2005."
        ),
        features="sentence text; test 3999 sentences with gold",
        files=("answers.txt", "Sentiment_Z_train.txt", "Sentiment_Z_test.txt",
               "Sentiment_text_train.txt", "Sentiment_text_test.txt"),
    ),
    CrowdDataset(
        name="music", source="music", convert=convert_music,
        title="Music genre classification, crowd labels from Amazon Mechanical Turk.",
        description=(
            "30-second song excerpts of 10 genres (blues, classical, country, disco, hiphop, "
            "jazz, metal, pop, reggae, rock) labelled by the crowd; the tasks are the songs of "
            "music_genre_gold.csv, with gold labels; the test songs of music_genre_test.csv "
            "have gold labels and no votes. Features: the 124 audio features of each song, as "
            "data and data_test. Copy in S. Ibrahim et al.'s end-to-end-crowdsourcing. "
            "music_genre_mturk.csv: one vote per line, 'id,annotator,feature0,...,feature123,"
            "class' (id: the song's file name; class: the worker's genre). "
            "music_genre_gold.csv, music_genre_test.csv: 'id,feature0,...,feature123,class' "
            "(class: the true genre). The release's mturk_answers.csv holds the same votes in "
            "Mechanical Turk's batch format and is not downloaded. Classes are the genre names "
            "that occur, in alphabetical order."
        ),
        reference=(
            "F. Rodrigues, F. C. Pereira and B. Ribeiro. \"Learning from multiple annotators: "
            "distinguishing good from random labelers\". Pattern Recognition Letters 34(12), "
            "2013. G. Tzanetakis and P. Cook. \"Musical genre classification of audio "
            "signals\". IEEE Trans. Speech and Audio Processing 10(5), 2002."
        ),
        features="124 audio features; test songs with gold",
        files=("music_genre_mturk.csv", "music_genre_gold.csv", "music_genre_test.csv"),
    ),
    _zhang(
        "bluebird", same_as="zheng_d_Duck_Identification",
        title="Bluebird species identification (two species), via Zhang et al. 2014.",
        description=(
            "Every worker labelled every image (binary). "
            + _ZHANG2014_FORMAT.format(prefix="bluebird", truth="")
            + " Collected by P. Welinder, S. Branson, S. Belongie and P. Perona, \"The "
            "multidimensional wisdom of crowds\", NeurIPS 2010."
        ),
    ),
    _zhang(
        "dog", same_as="zheng_s4_Dog_data",
        title="Dog breed identification (4 breeds of the Stanford Dogs images), via Zhang et "
              "al. 2014.",
        description=(
            _ZHANG2014_FORMAT.format(prefix="dog", truth=", one line per vote (a task's label "
                                     "repeated)")
            + " Collected by D. Zhou, J. C. Platt, S. Basu and Y. Mao, \"Learning from the "
            "wisdom of crowds by minimax entropy\", NeurIPS 2012."
        ),
    ),
    _zhang(
        "rte", same_as="snow2008_rte",
        title="Recognizing textual entailment (binary), via Zhang et al. 2014.",
        description=(
            _ZHANG2014_FORMAT.format(prefix="rte", truth="")
            + " Collected by Snow et al., EMNLP 2008."
        ),
    ),
    _zhang(
        "trec",
        title="TREC 2011 crowdsourcing track relevance judgments (binary), via Zhang et al. "
              "2014.",
        description=_ZHANG2014_FORMAT.format(prefix="trec", truth=", for part of the tasks"),
    ),
    _zhang(
        "web",
        title="Web search relevance judgments (5 levels), via Zhang et al. 2014.",
        description=(
            _ZHANG2014_FORMAT.format(prefix="web", truth="")
            + " Collected by D. Zhou et al., \"Learning from the wisdom of crowds by minimax "
            "entropy\", NeurIPS 2012."
        ),
    ),
    _act("CF", title="CrowdFlower crowd of the Active Crowd Toolkit."),
    _act("CF_amt", title="Mechanical Turk crowd of the Active Crowd Toolkit (CF_amt)."),
    _act("MS", title="MS crowd of the Active Crowd Toolkit."),
    _act(
        "SP", title="Sentence sentiment polarity, as published in the Active Crowd Toolkit.",
        more=" Task ids are sentence numbers; 0 = negative, 1 = positive.",
        also_cite=" Crowd of Rodrigues et al., Pattern Recognition Letters, 2013.",
        same_as="sentiment_polarity",
    ),
    _act(
        "SP_amt",
        title="Sentence sentiment polarity, a second Mechanical Turk crowd of the Active Crowd "
              "Toolkit (20 votes per sentence).",
        more=" 0 = negative, 1 = positive.",
    ),
    _act(
        "ZenCrowd_all",
        title="ZenCrowd entity linking (binary), all workers, via the Active Crowd Toolkit.",
        more=" Task ids are URLs.", also_cite=_ZENCROWD,
    ),
    _act(
        "ZenCrowd_in",
        title="ZenCrowd entity linking (binary), workers from India, via the Active Crowd "
              "Toolkit.",
        more=" Task ids are URLs.", also_cite=_ZENCROWD,
    ),
    _act(
        "ZenCrowd_us",
        title="ZenCrowd entity linking (binary), workers from the US, via the Active Crowd "
              "Toolkit.",
        more=" Task ids are URLs.", also_cite=_ZENCROWD,
    ),
    _zheng(
        "zheng_d_Duck_Identification",
        title="Duck (bluebird) identification, binary, from Zheng et al.'s truth-inference "
              "benchmark.",
        description=_ZHENG_FORMAT.format(truth="") + " Collected by Welinder et al., NeurIPS "
        "2010.",
    ),
    _zheng(
        "zheng_d_jn_product",
        title="Product matching (do two records describe the same product?), binary, from "
              "Zheng et al.'s benchmark.",
        description=_ZHENG_FORMAT.format(truth="") + " Collected by J. Wang, T. Kraska, M. J. "
        "Franklin and J. Feng, \"CrowdER: crowdsourcing entity resolution\", PVLDB 2012.",
    ),
    _zheng(
        "zheng_d_sentiment",
        title="Sentiment (binary), 20 votes per task, from Zheng et al.'s benchmark.",
        description=_ZHENG_FORMAT.format(truth="") + " Copy in the TIN-model repository "
        "(headers 'id,worker,answer' and 'q,truth').",
    ),
    _zheng(
        "zheng_s4_Dog_data",
        title="Dog breed identification (4 breeds), from Zheng et al.'s benchmark.",
        description=_ZHENG_FORMAT.format(truth="") + " Collected by Zhou et al., NeurIPS 2012.",
    ),
    _zheng(
        "zheng_s4_Face_Sentiment_Identification",
        title="Face sentiment identification (4 classes), from Zheng et al.'s benchmark.",
        description=_ZHENG_FORMAT.format(truth=""),
    ),
    _zheng(
        "zheng_s4_Relevance",
        title="Document relevance judgments, from Zheng et al.'s benchmark.",
        description=_ZHENG_FORMAT.format(truth=", for part of the tasks") + " Copy in the "
        "TIN-model repository.",
    ),
    _zheng(
        "zheng_s5_AdultContent",
        title="Adult content rating of web pages, from Zheng et al.'s benchmark.",
        description=_ZHENG_FORMAT.format(truth=", for part of the tasks") + " Copy in the "
        "TIN-model repository.",
    ),
    _snow(
        "rte",
        title="Recognizing textual entailment (binary), Snow et al. 2008.",
        description=(
            "Each of 800 sentence pairs of the PASCAL RTE-1 data was labelled by 10 workers: "
            "does the hypothesis follow from the text (1) or not (0)? "
            + _SNOW_FORMAT.format(member="rte.standardized.tsv")
        ),
    ),
    _snow(
        "temp",
        title="Temporal ordering of event pairs (binary, labels 1 and 2), Snow et al. 2008.",
        description=_SNOW_FORMAT.format(member="temp.standardized.tsv"),
    ),
    _snow(
        "wsd",
        title="Word sense disambiguation of 'president' (3 senses, labels 1-3), Snow et al. "
              "2008.",
        description=_SNOW_FORMAT.format(member="wsd.standardized.tsv"),
    ),
    # not classification crowds: converted in memory into the estimators' arrays
    CrowdDataset(
        name="movie_reviews_rodrigues", source="movie_reviews_rodrigues",
        convert=convert_movie_reviews, kind="regression",
        title="Movie review ratings (regression: continuous ratings on a 0-1 scale), crowd "
              "answers from Amazon Mechanical Turk.",
        description=(
            "1500 movie reviews rated by 135 workers (4 or 5 answers per review, 7440 in all), "
            "with the true rating of each, and 3506 test reviews with their true rating and no "
            "answers; features: the reviews as bag-of-words counts (word ids only: the release "
            "has no vocabulary). Loaded as votes, a float matrix (1500, 135) of the answers, NaN "
            "where a worker did not answer (the y of CrowdLayerRegressor); target, the true "
            "ratings; data and data_test, scipy.sparse csr matrices of word counts (26735 word "
            "ids); target_test. Ratings stay on the release's 0-1 scale (Rodrigues and Pereira "
            "2018 report MAE on a 1-10 scale: multiply by 10); 5 answers of -0.1 or 1.1 are kept "
            "as published. Copy in Rodrigues et al.'s MA-sLDAr repository. answers.txt: a "
            "1500 x 135 matrix (reviews x workers), space-separated ratings in steps of 0.1, "
            "999999999 where the worker did not answer. labels_train_amt.txt, labels_test.txt: "
            "one true rating per line. data_train_amt.txt, data_test.txt: one review per line "
            "in LDA-C format ('n id:count id:count ...')."
        ),
        reference=(
            "F. Rodrigues, M. Lourenco, B. Ribeiro and F. C. Pereira. \"Learning supervised "
            "topic models for classification and regression from crowds\". IEEE TPAMI 39(12), "
            "2017. B. Pang and L. Lee. \"Seeing stars: exploiting class relationships for "
            "sentiment categorization with respect to rating scales\". ACL, 2005."
        ),
        features="bag-of-words counts (sparse); test 3506 reviews with true ratings",
    ),
    CrowdDataset(
        name="conll2003_ner_mturk", source="conll2003_ner_mturk",
        convert=convert_conll2003_ner, kind="sequence",
        title="Named-entity tags of CoNLL-2003 sentences (sequence labelling: BIO tags of "
              "persons, locations, organizations, miscellaneous), crowd tags from Amazon "
              "Mechanical Turk (47 workers).",
        description=(
            "The release splits the crowd-tagged news documents into val (200 documents, 2997 "
            "sentences) and test (199 documents, 3256 sentences), every sentence with its gold "
            "tags. Loaded with val as the training split and test as the test split, sentences "
            "padded to the longest (60 tokens): data and data_test, the tokens (object arrays, "
            "'' for padding); votes and votes_test, int8 tag indices (n_sentences, 60, 47), -1 "
            "where a worker did not tag the sentence and for padding (the y of "
            "SequenceCrowdLayerClassifier; votes_test is for aggregation: a model scored on "
            "target_test must not train on it); target and target_test, the gold tag indices "
            "(-1: padding); class_names, the 9 tags B-LOC, B-MISC, B-ORG, B-PER, I-LOC, I-MISC, "
            "I-ORG, I-PER, O. A worker's sentence is kept only if it has the ground truth's "
            "tokens (one 'token TAG' line each, a known tag): in 4374 of the 29704 sentences "
            "that workers tagged, the tagging interface split or merged tokens ('Chile/LOC', a "
            "tag on a line of its own), and those are dropped, as in Nguyen et al.'s reader; "
            "11545 training and 13785 test sentences remain tagged. "
            "Copy in Nguyen et al.'s seqcrowd-acl17 repository. task1.zip holds "
            "task1/{val,test}/ground_truth/<document>.txt (the gold tags: one 'token TAG' per "
            "line, a blank line between sentences) and "
            "task1/{val,test}/mturk_train_data/<worker>/<document>.txt (a worker's tags of a "
            "document, in the same format); it is read in memory, never extracted."
        ),
        reference=(
            "F. Rodrigues, F. C. Pereira and B. Ribeiro. \"Sequence labeling with multiple "
            "annotators\". Machine Learning 95(2), 2014. A. T. Nguyen, B. C. Wallace, J. J. Li, "
            "A. Nenkova and M. Lease. \"Aggregating and predicting sequence labels from crowd "
            "annotations\". ACL, 2017. E. F. Tjong Kim Sang and F. De Meulder. \"Introduction "
            "to the CoNLL-2003 shared task: language-independent named entity recognition\". "
            "CoNLL, 2003."
        ),
        features="the sentences' tokens; test 3256 sentences with gold tags",
    ),
    # the affect ratings of the snow2008 archive (regression, issue 27)
    *(CrowdDataset(
        name=f"snow2008_{emotion}", source="snow2008", kind="regression",
        convert=lambda paths, emotion=emotion: convert_snow2008_affect(
            paths["all_collected_data.tgz"], emotion),
        title=f"Affect ratings of news headlines: {emotion} "
              f"({'-100..100' if emotion == 'valence' else '0-100'}; regression), Snow et al. "
              "2008.",
        description=(
            "100 headlines of the SemEval-2007 affective text task, each rated by 10 Amazon "
            "Mechanical Turk workers (38 workers in all), with the experts' rating as gold. "
            "Loaded as votes, a float matrix (100, 38) of the ratings, NaN where a worker did "
            "not rate a headline; target, the gold ratings. " + _SNOW_FORMAT.format(
                member=f"{emotion}.standardized.tsv")
        ),
        reference=_SNOW2008,
    ) for emotion in SNOW2008_AFFECTS),
    # an ordinal crowd (issue 27)
    CrowdDataset(
        name="metaphor_novelty_parde", source="metaphor_novelty_parde",
        convert=convert_metaphor_novelty, kind="ordinal",
        title="Metaphor novelty of word pairs (ordinal: scores 0-3), crowd scores from Amazon "
              "Mechanical Turk, with an expert's scores as gold.",
        description=(
            "anonymized_combined_hits_1-100.csv: a Mechanical Turk results file, one row per "
            "assignment ('HITId,AssignmentId,WorkerId,...'); each 'Answer.*' cell holds "
            "'<itemId> <score>', so one row carries several votes. "
            "expert_combined_hits_1-100.csv: the same layout, one expert's scores (the gold). "
            "Loaded as votes, grade indices (1938, 231), -1 where a worker did not score an "
            "item; target, the expert's grades; class_names [0, 1, 2, 3] in order."
        ),
        reference=(
            "N. Parde and R. D. Nielsen. \"Finding patterns in noisy crowds: regression-based "
            "annotation aggregation for crowdsourced data\". EMNLP, 2017."
        ),
        licence="CC BY-SA 3.0",
    ),
    # pairwise comparisons and texts (issue 38)
    CrowdDataset(
        name="readinglevel_chen2013", source="readinglevel_chen2013",
        convert=convert_reading_level, kind="pairwise",
        title="Reading difficulty of text passages (pairwise comparisons: which of two passages "
              "is harder to read), with each passage's grade level as gold; the crowd of "
              "Crowd-BT.",
        description=(
            "12,728 comparisons of 490 passages by 624 crowd workers, no ties (the 'don't know' "
            "answers were dropped by the release). Loaded as comparisons, a pandas DataFrame "
            "with the columns worker, left, right, label (the pair in id order, label the "
            "passage judged harder), the input of the pairwise aggregators; target, the "
            "passages' grade levels 1-12 (from the original corpus, not from the crowd; many "
            "ties: score a ranking with Spearman's rho or Kendall's tau-b, or per-pair accuracy "
            "on pairs of different levels). The 2 rows that compare a passage with itself are "
            "dropped; the 25 repeated rows are kept; 965 rows compare passages of the same "
            "level. Copy in the hra repository. all_pair.txt: one comparison a line, 'worker "
            "winner loser', whitespace-separated integer ids. doc_info.txt: 'passage level'."
        ),
        reference=(
            "X. Chen, P. N. Bennett, K. Collins-Thompson and E. Horvitz. \"Pairwise ranking "
            "aggregation in a crowdsourced setting\". WSDM, 2013."
        ),
        licence="GPL-3.0 (the hra repository)",
    ),
    *(CrowdDataset(
        name=f"crowdspeech_{split}", source=f"crowdspeech_{split}",
        convert=lambda paths, split=split: convert_crowdspeech(paths, split), kind="text",
        title=f"Crowd transcriptions of the LibriSpeech {split} recordings (CrowdSpeech; texts, "
              "7 per recording), with the reference transcripts.",
        description=(
            "Loaded as votes, a pandas DataFrame of strings (recordings x workers, None where a "
            "worker did not transcribe a recording; index: the recording's file name without "
            ".mp3), the input of the text aggregators; target, the reference transcripts "
            "(lowercase, no punctuation: normalize the crowd's texts the same way before "
            "computing a word error rate). "
            f"crowdspeech-{split}-crowd.tsv: tab-separated, header 'INPUT:audio "
            "OUTPUT:transcription ASSIGNMENT:worker_id', one transcription a row, some of them "
            f"holding newlines inside quotes. crowdspeech-{split}-gt.txt: no header, "
            "'audio<TAB>reference'."
        ),
        reference=(
            "N. Pavlichenko, I. Stelmakh and D. Ustalov. \"CrowdSpeech and Vox DIY: benchmark "
            "dataset for crowdsourced audio transcription\". NeurIPS Datasets and Benchmarks, "
            "2021. V. Panayotov, G. Chen, D. Povey and S. Khudanpur. \"Librispeech: an ASR "
            "corpus based on public domain audio books\". ICASSP, 2015."
        ),
        licence="CC BY 4.0 (data/LICENSE of the VoxDIY repository)",
    ) for split in CROWDSPEECH_SPLITS),
)
