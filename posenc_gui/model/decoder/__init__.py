"""A real Llama-family decoder traced in NumPy: :func:`open_decoder`, then ``trace``.

>>> decoder = open_decoder("path/to/SmolLM2-135M-Instruct.Q4_1.gguf")   # doctest: +SKIP
>>> trace = decoder.trace(decoder.tokenize("The cat sat on the mat."), layers=[0, 5])  # doctest: +SKIP
>>> trace.attention(5).shape, pair_contributions(trace, 5, head=2).share.shape        # doctest: +SKIP
((9, 8, 8), (32,))
"""

from .config import DecoderConfig
from .pairs import PairContributions, pair_contributions
from .trace import MAX_TOKENS, Decoder, DecoderTrace, TraceCancelled, is_decoder, open_decoder

__all__ = ["MAX_TOKENS", "Decoder", "DecoderConfig", "DecoderTrace", "PairContributions", "TraceCancelled",
           "is_decoder", "open_decoder", "pair_contributions"]
