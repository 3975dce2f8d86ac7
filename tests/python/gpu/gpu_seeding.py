"""The seeded-randomness fixtures of a GPU suite (``rng``, ``gen``, ``seed_note``), for a
conftest to import with its run's seed: ``rng, gen, seed_note = seeded_fixtures(SEED)``."""

import random

import pytest


def seeded_fixtures(seed, device="cuda"):
    """``device``: where ``gen`` draws (a torch device string)."""
    @pytest.fixture
    def rng(request):
        """A random.Random seeded by the run's seed and the test's id."""
        return random.Random(f"{seed}/{request.node.nodeid}")

    @pytest.fixture
    def gen(rng):
        import torch

        g = torch.Generator(device=device)
        g.manual_seed(rng.getrandbits(62))
        return g

    @pytest.fixture
    def seed_note(request):
        return (f"[seed {seed}: rerun with TILECRAFT_GPU_TEST_SEED={seed} python -m pytest "
                f"'{request.node.nodeid}']")

    return rng, gen, seed_note
