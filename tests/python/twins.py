"""The training steps tests/python/ddp.py and loops.py both check.

One small model trained twice from the same initial parameters on the same
data: once with DDP's default (gloo) allreduce, once through the netagg
hook. Over 1 MiB of parameters: DDP's first bucket takes up to 1 MiB
whatever bucket_cap_mb says, so a smaller model would be one bucket a step.
"""

import copy
from typing import Dict, Iterator, NamedTuple, Optional, Tuple

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import netagg.torch as nt

Twins = Tuple[Dict[str, DDP], Dict[str, torch.optim.Optimizer]]


class Step(NamedTuple):
    """What a step left: the netagg model's parameters and how they compare."""

    step: int
    params: torch.Tensor
    same_on_every_rank: bool
    diff_vs_gloo: float


def flat(model: torch.nn.Module) -> torch.Tensor:
    """A model's parameters, one flat tensor."""
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def twins(state: nt.HookState, bucket_cap_mb: float, group: Optional[dist.ProcessGroup] = None,
          momentum: float = 0.0) -> Twins:
    """The model twice, "gloo" and "netagg" (through the hook on state), and an SGD each."""
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(32, 1024), torch.nn.ReLU(),
                              torch.nn.Linear(1024, 256), torch.nn.ReLU(),
                              torch.nn.Linear(256, 4))
    models = {name: DDP(copy.deepcopy(net), bucket_cap_mb=bucket_cap_mb, process_group=group)
              for name in ("gloo", "netagg")}
    models["netagg"].register_comm_hook(state, nt.allreduce_hook)
    opts: Dict[str, torch.optim.Optimizer] = {
        name: torch.optim.SGD(m.parameters(), lr=0.05, momentum=momentum)
        for name, m in models.items()}
    return models, opts


def steps(models: Dict[str, DDP], opts: Dict[str, torch.optim.Optimizer], count: int,
          group: Optional[dist.ProcessGroup] = None) -> Iterator[Step]:
    """count steps of both models on this rank's batches, each compared after it.

    The netagg model's parameters are gathered from every rank of group
    (through gloo): DDP keeps them identical, or something summed wrong.
    """
    world = dist.get_world_size(group)
    gen = torch.Generator().manual_seed(100 + dist.get_rank())
    for step in range(count):
        x = torch.randn(16, 32, generator=gen)
        y = torch.randint(0, 4, (16,), generator=gen)
        for name, m in models.items():
            opts[name].zero_grad()
            torch.nn.functional.cross_entropy(m(x), y).backward()
            opts[name].step()
        mine = flat(models["netagg"])
        every = [torch.empty_like(mine) for _ in range(world)]
        dist.all_gather(every, mine, group=group)
        yield Step(step, mine, all(torch.equal(every[0], p) for p in every),
                   float((mine - flat(models["gloo"])).abs().max()))
