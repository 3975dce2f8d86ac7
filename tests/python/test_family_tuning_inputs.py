"""Bad input to the family tuning entry points, refused by name before anything runs (no GPU:
fake CUDA tensors): the one-call ops' tuning mode, the tuner's arguments, precompile's problems."""

import pytest

import tilecraft
from fakecuda import T
from tilecraft import _core, tuning
from tilecraft.api.arguments import Conv2dArguments


def _channels_last(n, c, h, w):
    return T(n, c, h, w, dtype="float16", strides=(h * w * c, 1, w * c, c))


def _conv_args():
    return Conv2dArguments(_channels_last(2, 16, 9, 9), _channels_last(16, 16, 3, 3),
                           _channels_last(2, 16, 9, 9), tilecraft.float32, padding=1)


@pytest.mark.parametrize("op", [
    lambda: tilecraft.grouped_gemm([], [], tuning="sometimes"),
    lambda: tilecraft.conv2d(None, None, tuning="sometimes"),
    lambda: tilecraft.conv3d(None, None, tuning="sometimes"),
])
def test_the_one_call_ops_refuse_an_unknown_tuning_mode_first(op):
    with pytest.raises(ValueError, match=r"^tuning: expected None or one of .*got 'sometimes'"):
        op()


def test_the_native_one_call_names_a_bad_tuning_argument():
    args = _conv_args()
    with pytest.raises(ValueError, match="tuning: expected 'auto', 'blocking', 'off' or 'force', "
                                         "got 'sometimes'"):
        _core.api.conv2d(args._native, 0, "sometimes")
    with pytest.raises(TypeError, match=r"^tuning: expected 'auto', 'blocking', 'off', 'force' "
                                        r"or None, got 5 \(int\)"):
        _core.api.conv2d(args._native, 0, 5)


@pytest.mark.parametrize("call", [tuning.tune, tuning.signature, tuning.find_tuned])
def test_the_tuner_takes_arguments_of_a_family_only(call):
    with pytest.raises(TypeError, match=r"^args: expected a tilecraft.api.arguments.GemmArguments, "
                                        r".*got 'x' \(str\)$"):
        call("x")


def test_precompile_names_the_problem_that_is_not_arguments():
    with pytest.raises(TypeError, match=r"^problems\[1\]: expected .*got 3 \(int\)$"):
        _core.tune.precompile([_conv_args(), 3], 2, True)
