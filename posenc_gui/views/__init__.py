"""Qt views: one module per panel. The main window makes a dock for each."""

from __future__ import annotations


def panel_classes() -> list[type]:
    """Every panel class, in the order of the View menu."""
    from .heatmap import HeatmapPanel
    from .parameters import ParametersPanel
    from .similarity import SimilarityPanel
    from .waveforms import WaveformsPanel
    from .permutation import PermutationPanel
    from .uniqueness import UniquenessPanel
    from .magnitude import MagnitudePanel
    from .linear_relation import LinearRelationPanel
    from .relative import RelativePanel
    from .addition import AdditionPanel
    from .scorecard import ScorecardPanel
    from .spectrum import SpectrumPanel
    from .walkthrough import WalkthroughPanel

    return [
        ParametersPanel,
        HeatmapPanel,
        WaveformsPanel,
        SimilarityPanel,
        PermutationPanel,
        UniquenessPanel,
        MagnitudePanel,
        LinearRelationPanel,
        RelativePanel,
        AdditionPanel,
        SpectrumPanel,
        ScorecardPanel,
        WalkthroughPanel,
    ]
