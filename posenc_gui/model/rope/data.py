"""What the RoPE panels show, computed from the app's parameters (the ``rope`` scheme's options)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.params import EncodingParams, check_params
from . import rope_bands, rope_frequencies, rope_type


@dataclass(frozen=True)
class RopeFrequencyData:
    """Each rotary pair's frequency with the chosen scaling and without it.

    Attributes
    ----------
    scaled : bool
        The scaling type changes the frequencies (every type but the default).
    inv_freq, unscaled : ndarray
        θ_i of the chosen scaling type (at ``params.seq_len`` for dynamic NTK)
        and of the same base without scaling, float64.
    wavelength, unscaled_wavelength : ndarray
        2π / θ_i: positions per full turn of the pair.
    band : ndarray of str
        How the scaling type treats each pair (:class:`~posenc_gui.model.rope.RopeBands`).
    attention_factor : float
        The factor the logits are scaled by (YaRN's mscale; 1 for most types).
    trained_context : int or None
        L₀, the context of pretraining, for the types that have one.
    extended_context : int or None
        L₀ · factor, the context the scaling reaches (yarn, llama3), or None.
    beyond_trained : int
        Pairs that do not complete one turn within L₀ (unscaled), or within N when there is no L₀.
    """

    params: EncodingParams
    scaled: bool
    inv_freq: np.ndarray
    unscaled: np.ndarray
    wavelength: np.ndarray
    unscaled_wavelength: np.ndarray
    band: np.ndarray
    attention_factor: float
    trained_context: int | None
    extended_context: int | None
    beyond_trained: int


    @property
    def band_ranges(self) -> list[tuple[str, int, int]]:
        """The runs of pairs in one band: ``[(band, first pair, last pair), …]`` in pair order."""
        runs: list[tuple[str, int, int]] = []
        for pair, band in enumerate(self.band.tolist()):
            if runs and runs[-1][0] == band:
                runs[-1] = (band, runs[-1][1], pair)
            else:
                runs.append((band, pair, pair))
        return runs


def rope_frequency_data(params: EncodingParams) -> RopeFrequencyData:
    """The Frequencies panel's data for ``params`` (scheme ``rope``).

    Raises
    ------
    ValueError
        For parameters of another scheme, or a configuration Hugging Face refuses.
    """
    params = check_params(params)
    if params.info.hf_rope is None:
        raise ValueError(f"params must be of the rope scheme (or another with a Hugging Face RoPE configuration), "
                         f"got {params.scheme!r}")
    options = dict(params.options)
    config = params.info.hf_rope(params.d_model, **options)
    inv_freq, attention_factor = rope_frequencies(config, seq_len=params.seq_len)
    unscaled, _ = rope_frequencies(params.info.hf_rope(params.d_model, **{**options, "rope_type": "default"}))
    bands = rope_bands(config)
    kind = rope_type(options["rope_type"])
    trained = options["original_max_position_embeddings"] if kind.context != "none" else None
    horizon = trained if trained is not None else params.seq_len
    wavelength = 2.0 * math.pi / inv_freq
    unscaled_wavelength = 2.0 * math.pi / unscaled
    # dynamic NTK scales for the sequence at hand: it has no one context it extends to
    extends = kind.context == "original"
    extended = config.get("max_position_embeddings") if extends else None
    return RopeFrequencyData(params, kind.uses_factor, inv_freq, unscaled, wavelength, unscaled_wavelength, bands.band,
                             float(attention_factor), trained, extended,
                             int(np.count_nonzero(unscaled_wavelength > horizon)))
