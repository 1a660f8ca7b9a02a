"""The recipe of the Part IV training run: every setting that fixes the shipped model's weights.

Taught in Part IV, "Inside a model that learned something". A module of its own, so that the CLI that trains
(``byhand.train_ioi``) and the readers of the recipe (chapter 40, its exercises) share it without importing each other.
"""
from __future__ import annotations

from dataclasses import dataclass

from byhand.gpt import GPTConfig


@dataclass(frozen=True)
class TrainConfig:
    """Everything that fixes a training run; the same config gives the same weights.

    ``python -m byhand.train_ioi`` trains with it; chapter 40's recipe table and exercise inside.1 read it.
    """

    seed: int = 1  # initialises the weights (init_gpt_params) and, as seed + 1, the sentence stream
    steps: int = 2000  # number of AdamW steps (the cosine decay ends here)
    batch_size: int = 32  # sentences per step
    lr_max: float = 2e-3  # peak learning rate, reached after the warm-up
    lr_min: float = 1e-4  # learning rate at the last step
    beta2: float = 0.999  # AdamW's decay rate of the second moment
    warmup: int = 100  # steps of linear warm-up from 0
    weight_decay: float = 0.1  # AdamW lambda on weight matrices and embeddings (not biases or LN)
    clip: float = 1.0  # max global gradient norm
    io_weight: float = 1.0  # lambda_IO: extra weight on the answer, objective = loss + lambda_IO * loss_IO
    mask_s2: bool = True  # ignore the target at the second mention of S (a coin flip between the two names)
    n_layers: int = 3  # blocks (2 layers learn a positional shortcut instead of a name-moving head)
    n_heads: int = 4  # heads per block
    d_model: int = 64  # width of the residual stream
    d_ff: int = 256  # feed-forward hidden width (4 d_model)
    context: int = 24  # longest input; the longest sentence has 21 tokens with <bos> and <eos>
    n_eval: int = 1000  # held-out sentences for the metrics
    eval_seed: int = 2024  # seed of the held-out sentences

    def model_config(self, vocab_size: int) -> GPTConfig:
        """The GPTConfig of this run."""
        return GPTConfig(vocab_size=vocab_size, context=self.context, d_model=self.d_model, n_heads=self.n_heads,
                         n_layers=self.n_layers, d_ff=self.d_ff)
