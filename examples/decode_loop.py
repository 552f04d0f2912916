"""A toy greedy decoding loop, shaped like the step function of an inference engine.

Each marked line makes the host wait for every kernel already queued on the GPU:
`synclint check examples/` reports them, `synclint --fix examples/` rewrites the fixable one.
"""

import torch


class TinyDecoder(torch.nn.Module):
    def __init__(self, vocab: int = 128, hidden: int = 64) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.head = torch.nn.Linear(hidden, vocab)

    def forward(self, token_ids: list[int]) -> torch.Tensor:
        # Blocking host-to-device copy from a Python list (fix: pinned, non-blocking helper).
        ids = torch.tensor(token_ids, dtype=torch.long, device="cuda")
        return self.head(self.embed(ids))


def decode(model: TinyDecoder, prompt: list[int], steps: int) -> list[int]:
    tokens = list(prompt)
    for _ in range(steps):
        logits = model(tokens)
        scores = torch.zeros(logits.shape[-1], device="cuda") + logits[-1]
        # Device-to-host readback every step: the loop cannot run ahead of the GPU.
        tokens.append(scores.argmax().item())
    return tokens


def log_first_token(model: TinyDecoder, prompt: list[int]) -> int:
    # A deliberate readback for logging: functions named `log_*` may sync (`allow-functions`).
    first = torch.zeros(1, device="cuda").sum()
    return int(first.item())
