"""Mixed precision and the optimiser step that the trainers (MLM pretraining and
fine-tuning) share.

``precision`` is a setting: ``auto`` picks bfloat16 autocast on a GPU that has it (no
loss scaling needed), float16 autocast with a gradient scaler on an older GPU, and
float32 on a CPU. Any of ``fp32``, ``bf16`` and ``fp16`` can be forced, on any device:
the tests run the bf16 and fp16 paths on the CPU, so the code a GPU takes is exercised
where no GPU is. Every step clips the gradient norm (1.0 by default) and steps the
learning-rate schedule.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

PRECISIONS = ("auto", "fp32", "bf16", "fp16")


def resolve_precision(requested: str, device: str) -> str:
    """``fp32``, ``bf16`` or ``fp16`` for ``requested`` on ``device`` (see the module)."""
    import torch

    if requested not in PRECISIONS:
        raise ValueError(f"precision {requested!r}: expected one of {PRECISIONS}")
    if requested != "auto":
        return requested
    if not device.startswith("cuda"):
        return "fp32"
    return "bf16" if torch.cuda.is_bf16_supported() else "fp16"


@contextlib.contextmanager
def autocast(device: str, precision: str) -> Iterator[None]:
    """Autocast to ``precision`` (resolved) on ``device``'s type; nothing for fp32."""
    import torch

    if precision == "fp32":
        yield
        return
    dtype = torch.bfloat16 if precision == "bf16" else torch.float16
    with torch.autocast(device_type=device.split(":")[0], dtype=dtype):
        yield


class Stepper:
    """One optimiser step: backward (scaled for fp16), unscale, clip, step, schedule.

    ``step`` returns the loss as a tensor, never a Python number, so a training loop
    that does not print every step never waits for the device."""

    def __init__(
        self,
        model: Any,
        lr: float,
        weight_decay: float,
        total_steps: int,
        warmup: float,
        device: str,
        precision: str,
        clip: float = 1.0,
    ) -> None:
        import torch

        self.model, self.clip = model, clip
        self.device, self.precision = device, precision
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
        self.scheduler = schedule(self.optimizer, total_steps, warmup)
        self.scaler = torch.amp.GradScaler(device.split(":")[0], enabled=precision == "fp16")

    def autocast(self) -> contextlib.AbstractContextManager:
        return autocast(self.device, self.precision)

    def step(self, loss: Any) -> Any:
        import torch

        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    def state_dict(self) -> dict:
        return {
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "scaler": self.scaler.state_dict(),
        }

    def load_state_dict(self, state: dict) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.scaler.load_state_dict(state["scaler"])


def schedule(optimizer: Any, total: int, warmup: float) -> Any:
    """Linear warm-up over ``warmup`` of the steps, then cosine decay to zero."""
    import torch

    warm = max(1, int(total * warmup))

    def factor(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        return max(0.0, 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm))))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
