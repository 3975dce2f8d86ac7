"""The compute-sanitizer subset: four kernels (cooperative, pingpong with a 2x1 cluster,
StreamK split-K, and the fused bias + gelu + aux epilogue) on one or two small ragged shapes,
so that a memcheck run finishes in minutes:

    compute-sanitizer --tool memcheck python -m pytest tests/python/gpu90 -m sanitizer
"""

import pytest

from sm90_case import random_case, without_c
from sm90_check import check_case

pytestmark = [pytest.mark.gpu, pytest.mark.sanitizer]


@pytest.mark.parametrize("key,shapes,extra", [
    ("bf16_rcr", [(1, 8, 8), (131, 72, 200)], {}),
    ("pp_128x128_c2x1", [(264, 24, 3), (8, 136, 72)], {}),
    ("coop_streamk", [(70, 136, 520)], {"split": 3}),
    ("aux_gelu_brow", [(5, 8, 8), (129, 264, 40)], {}),
], ids=["bf16_rcr", "pp_128x128_c2x1", "coop_streamk", "aux_gelu_brow"])
def test_sanitizer_subset(ops, rng, gen, seed_note, key, shapes, extra):
    for shape in shapes:
        check_case(ops, random_case(key, rng, shape=shape, **extra), gen, seed_note)
    check_case(ops, without_c(random_case(key, rng, shape=shapes[0], **extra)), gen, seed_note)
